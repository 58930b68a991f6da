"""The hostile corpus (tests/lean/hostile_corpus.py) is refused before any Lean process sees it:
through the Python API in every mode, and through `math2 lean check` on `.lean` and `.jsonl` files
in every mode the command offers. The fake REPL logs every request it receives; the log proves
that nothing of the corpus reached it, while a clean item sent last does."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Mode, Status
from math2.lean.hygiene import ContextTrust, Strictness, check_code
from math2.lean.pool import PoolConfig
from tests.lean.conftest import fake_argv, requests
from tests.lean.hostile_corpus import CHECKED_MODES, EVERY_MODE
from tests.lean.legit_corpus import ACCEPTED as LEGIT

CLEAN = "import Mathlib\ntheorem clean_one (x : ℕ) : x + 0 = x := by sorry"
CLEAN_PROOF = "import Mathlib\ntheorem clean_one (x : ℕ) : x + 0 = x := by simp"
ALL = {**EVERY_MODE, **CHECKED_MODES}


def corpus(mode: Mode) -> dict[str, str]:
    return dict(EVERY_MODE) if mode is Mode.PLAIN else dict(ALL)


def test_the_corpus_is_large_and_distinct() -> None:
    assert len(EVERY_MODE) >= 60
    assert len(set(ALL.values())) == len(ALL)


@pytest.mark.parametrize("strictness", list(Strictness))
def test_every_refusal_names_rule_line_and_column(strictness: Strictness) -> None:
    cases = EVERY_MODE if strictness is Strictness.RELAXED else ALL
    for case, code in cases.items():
        report = check_code(code, name="foo", strictness=strictness)
        assert not report.ok, case
        placed = [v for v in report.violations if v.line is not None]
        if case not in ("two theorems", "lemma before", "no theorem", "example"):
            assert placed, (case, report.reason)
            assert all(v.line >= 1 for v in placed)
            assert any(v.column is not None for v in placed), (case, report.reason)


@pytest.mark.parametrize("mode", list(Mode))
async def test_api_refuses_the_corpus_before_lean(tmp_path: Path, mode: Mode) -> None:
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
    checker = LeanChecker(backend, timeout_s=10)
    try:
        cases = corpus(mode)
        items = [CheckItem(id=k, code=c, name="foo", mode=mode) for k, c in cases.items()]
        results = [r async for r in checker.check_many(items)]
        assert len(results) == len(cases)
        for r in results:
            assert (r.status, r.passed) == (Status.REJECTED, False), r.id
            assert r.violations and r.reason
        assert requests(log) == []  # no Lean process saw anything
        code = CLEAN_PROOF if mode is Mode.PROOF else CLEAN
        clean = await checker.check(CheckItem(id="clean", code=code, mode=mode))
        assert clean.status is not Status.REJECTED, clean.reason
    finally:
        await backend.close()
    sent = requests(log)
    assert any("clean_one" in c for c in sent)  # the log does record what reaches the REPL
    for c in sent:
        assert "clean_one" in c or c.strip() == "import Mathlib", c


CLI_MODES = {
    "statement": ["--mode", "statement"],
    "proof": ["--mode", "proof"],
    "default": [],
    "relaxed": ["--relaxed-unsafe"],
}


@pytest.mark.parametrize("flags", sorted(CLI_MODES))
def test_cli_jsonl_refuses_the_corpus_before_lean(env: Path, flags: str) -> None:
    cases = corpus(Mode.PLAIN if flags == "relaxed" else Mode.STATEMENT)
    rows = [
        {"id": f"h{i}", "code": code, "theorem_name": "foo"}
        for i, code in enumerate(cases.values())
    ]
    if flags != "relaxed":  # the data asking for the mode the command already uses changes nothing
        mode = "proof" if flags == "proof" else "statement"
        rows = [{**r, "mode": mode} for r in rows]
    f = env / "hostile.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["lean", "check", *CLI_MODES[flags], str(f)])
    assert res.exit_code == 1, res.output
    assert f"{len(rows)} checked: 0 passed, {len(rows)} failed" in res.output
    assert res.output.count("rejected") == len(rows)
    assert requests(env / "requests.jsonl") == []


@pytest.mark.parametrize("flags", sorted(CLI_MODES))
def test_cli_lean_files_refuse_the_corpus_before_lean(env: Path, flags: str) -> None:
    cases = corpus(Mode.PLAIN if flags == "relaxed" else Mode.STATEMENT)
    # One command run per file is slow under CliRunner; every file of the corpus still gets one.
    for i, code in enumerate(cases.values()):
        f = env / f"Hostile{i}.lean"
        f.write_bytes(code.encode("utf-8"))
        args = ["lean", "check", "--no-cache", "--name", "foo", *CLI_MODES[flags], str(f)]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, (code, res.output)
        assert "rejected" in res.output, (code, res.output)
    assert requests(env / "requests.jsonl") == []
    f = env / "Clean.lean"
    f.write_text(CLEAN_PROOF if flags == "proof" else CLEAN)
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", *CLI_MODES[flags], str(f)])
    assert "rejected" not in res.output, res.output
    assert any("clean_one" in c for c in requests(env / "requests.jsonl"))


@pytest.mark.parametrize("case", sorted(LEGIT))
def test_real_statement_shapes_are_accepted(case: str) -> None:
    """Benchmark context (written by people) accepts every shape; a model's block (the default
    level) only those that hold nothing but the target, `open` and `variable`s of types."""
    name = "Nat.foo" if case == "protected theorem" else "foo"
    for strictness in (Strictness.STATEMENT, Strictness.RELAXED):
        report = check_code(
            LEGIT[case], name=name, strictness=strictness, trust=ContextTrust.BENCHMARK
        )
        assert report.ok, (case, report.reason)
    generated = check_code(LEGIT[case], name=name)
    assert generated.ok is (case in GENERATED_OK), (case, generated.reason)
    if not generated.ok:
        assert {v.rule for v in generated.violations} == {"generated"}, generated.reason
    if case == "namespace":
        assert check_code(LEGIT[case], name="Foo.foo").full_name == "Foo.foo"


# The legit shapes a model's block may have: the target alone, with `open`, namespaces,
# sections, universes, `omit … in`, attributes and doc comments on the target.
# (`letI` in the statement's type makes an instance: refused in a model's block, issue 34.)
GENERATED_OK = {
    "let in the type", "have in the type", "show from in the type",
    "protected theorem", "simp theorem", "stacks attribute", "docstring", "namespace",
    "open in", "noncomputable section", "universe", "plain string", "lemma", "omit in",
}  # fmt: skip


async def test_checker_places_refusals_in_the_whole_item() -> None:
    code = "-- c\nimport Mathlib\n\nopen Real\n#eval 1\ntheorem foo : True := sorry"
    checker = LeanChecker(ReplBackend.from_config(PoolConfig(argv=fake_argv(), size=1)))
    r = await checker.check(CheckItem(id="1", code=code, name="foo"))
    assert r.status is Status.REJECTED
    [v] = r.violations
    assert (v.rule, v.line, v.column) == ("command", 5, 0)
    assert "line 5, column 0" in r.reason
    await checker.backend.close()
