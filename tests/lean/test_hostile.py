"""Every hostile snippet is refused before any Lean process sees it: through the Python API,
the checker (the fake REPL's request log proves nothing was sent) and `math2 lean check` on .lean
and .jsonl files, in every mode the command offers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean import CheckItem, LeanChecker, Mode, ReplBackend, Status
from math2.lean.hygiene import Strictness, check_code
from math2.lean.pool import PoolConfig
from tests.lean.hostile import CODE, OK, STATEMENT

ALL = {**CODE, **STATEMENT}
PROOF_OK = {"real proof"}  # refused as a statement, accepted as a proof


def test_corpus_size() -> None:
    assert len(ALL) >= 60


@pytest.mark.parametrize("case", sorted(ALL))
@pytest.mark.parametrize("strict", [Strictness.STATEMENT, Strictness.PROOF])
def test_refused_by_the_api(case: str, strict: Strictness) -> None:
    if strict is Strictness.PROOF and case in PROOF_OK:
        pytest.skip("a real proof is what proof mode asks for")
    report = check_code("import Mathlib\n" + ALL[case], name="foo", strictness=strict)
    assert not report.ok, case
    assert all(v.rule and v.detail for v in report.violations)
    placed = [v for v in report.violations if v.line is not None]
    assert placed or any(v.rule in ("one theorem", "empty") for v in report.violations), case


@pytest.mark.parametrize("case", sorted(CODE))
def test_code_refused_even_relaxed(case: str) -> None:
    report = check_code("import Mathlib\n" + CODE[case], strictness=Strictness.RELAXED)
    assert not report.ok, case


def test_refusals_give_line_and_column() -> None:
    report = check_code("import Mathlib\n\nopen Real\ndef r := «IO».Process.run\n" + OK)
    [v] = [v for v in report.violations if v.rule == "io"]
    assert (v.line, v.column) == (4, 9)


def test_clean_context_is_accepted() -> None:
    code = "\n".join(
        [
            "import Mathlib",
            "open Real",
            "open scoped BigOperators",
            "noncomputable section",
            "namespace Demo",
            "variable {G : Type*} [Group G]",
            "universe u",
            "def double (n : ℕ) : ℕ := 2 * n",
            "noncomputable def half (x : ℝ) : ℝ := x / 2",
            "abbrev Pair := ℕ × ℕ",
            "structure Point where",
            "  x : ℕ",
            "  y : ℕ",
            "deriving Fintype",
            "class Pointed (α : Type*) where",
            "  pt : α",
            "inductive Color | red | green",
            "instance : Pointed ℕ := ⟨0⟩",
            "local instance : Inhabited Point := ⟨⟨0, 0⟩⟩",
            "attribute [local instance] Classical.propDecidable",
            "omit [Group G] in",
            "include G in",
            "set_option maxHeartbeats 400000 in",
            '/-- A doc. -/ @[simp, stacks 09JD "text"] protected theorem Nat.foo (n : ℕ)',
            "    (h : let m := n + 1; m > 0) (h' : letI : Fact (1 < 2) := ⟨by norm_num⟩; True)",
            "    : (show ℕ from n) = n := by sorry",
            "end Demo",
            "end",
        ]
    )
    report = check_code(code)
    assert report.ok, report.reason
    assert report.full_name == "Demo.Nat.foo"


@pytest.fixture
def checker_and_log(tmp_path: Path):
    log = tmp_path / "requests.jsonl"
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--log", str(log)]
    checker = LeanChecker(ReplBackend.from_config(PoolConfig(argv=argv, size=1)))
    yield checker, log
    import asyncio

    asyncio.run(checker.backend.close())


@pytest.mark.parametrize("mode", [Mode.STATEMENT, Mode.PROOF, Mode.PLAIN])
async def test_checker_never_sends_hostile_code(tmp_path: Path, mode: Mode) -> None:
    log = tmp_path / "requests.jsonl"
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--log", str(log)]
    checker = LeanChecker(ReplBackend.from_config(PoolConfig(argv=argv, size=1)))
    cases = CODE if mode is Mode.PLAIN else ALL
    if mode is Mode.PROOF:
        cases = {k: v for k, v in cases.items() if k not in PROOF_OK}
    try:
        for case, snippet in cases.items():
            r = await checker.check(
                CheckItem(id=case, code="import Mathlib\n" + snippet, name="foo", mode=mode)
            )
            assert r.status is Status.REJECTED, (case, r.status, r.reason)
    finally:
        await checker.backend.close()
    assert not log.exists() or log.read_text() == ""


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "requests.jsonl"
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--log", str(log)]
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(argv))
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    return tmp_path


@pytest.mark.parametrize("flags", [[], ["--mode", "proof"], ["--relaxed-unsafe"]])
def test_cli_refuses_every_snippet(cli_env: Path, flags: list[str]) -> None:
    cases = CODE if "--relaxed-unsafe" in flags else ALL
    if "proof" in flags:
        cases = {k: v for k, v in cases.items() if k not in PROOF_OK}
    jsonl = cli_env / "hostile.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": k, "code": "import Mathlib\n" + v}) + "\n" for k, v in cases.items()
        )
    )
    res = CliRunner().invoke(app, ["lean", "check", *flags, str(jsonl)])
    assert res.exit_code == 1, res.output
    assert f"{len(cases)} checked: 0 passed, {len(cases)} failed" in res.output
    for name in ("eval shell", "by_elab in type", "native_decide"):
        f = cli_env / f"{name.replace(' ', '_')}.lean"
        f.write_text("import Mathlib\n" + CODE[name])
        res = CliRunner().invoke(app, ["lean", "check", *flags, str(f)])
        assert res.exit_code == 1 and "rejected" in res.output, (name, res.output)
    log = cli_env / "requests.jsonl"
    assert not log.exists() or log.read_text() == ""
