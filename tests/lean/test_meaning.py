"""Statements a model cannot game (issue 19): context that changes what a statement means is
refused in a model's output and flagged in a benchmark's context; compiled-code proofs, option
bombs and oversized items are refused at every level, before any Lean process sees them (the
fake REPL's request log proves it), through the API and `math2 lean check` on .lean and .jsonl."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Status
from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.pool import PoolConfig
from tests.lean.conftest import fake_argv, requests
from tests.lean.meaning_corpus import ALWAYS, BENCHMARK_OK, MEANING, MULTI_PART, OPTION_BOMBS

BENCH = ContextTrust.BENCHMARK


@pytest.mark.parametrize("case", sorted(MEANING))
def test_meaning_changers_refused_in_generated_flagged_in_benchmark(case: str) -> None:
    code, flag = MEANING[case]
    generated = check_code(code, name="foo")
    assert not generated.ok, case
    assert "generated" in {v.rule for v in generated.violations}, generated.reason
    assert all(v.line is not None for v in generated.violations if v.rule == "generated")
    bench = check_code(code, name="foo", trust=BENCH)
    assert bench.ok, (case, bench.reason)
    assert flag in {f.rule for f in bench.flags}, (case, bench.flags)


@pytest.mark.parametrize("case", sorted(ALWAYS))
@pytest.mark.parametrize("trust", list(ContextTrust))
def test_compiled_code_and_bombs_refused_at_every_level(case: str, trust: ContextTrust) -> None:
    t0 = time.perf_counter()
    report = check_code(ALWAYS[case], name="foo", trust=trust)
    assert time.perf_counter() - t0 < 1.0, case  # a clear refusal within a second
    assert not report.ok, case
    assert report.reason


@pytest.mark.parametrize("case", sorted(OPTION_BOMBS))
def test_option_bombs_refused_or_clamped(case: str) -> None:
    generated = check_code(OPTION_BOMBS[case], name="foo")
    assert {v.rule for v in generated.violations} >= {"set_option"}, generated.reason
    bench = check_code(OPTION_BOMBS[case], name="foo", trust=BENCH)
    assert bench.ok, bench.reason
    assert [f.rule for f in bench.flags] == ["clamped"] and len(bench.clamps) == 1


def test_compiled_code_only_with_the_callers_option() -> None:
    code = ALWAYS["native_decide helper"]
    refused = check_code(code, name="foo", trust=BENCH)
    assert {v.rule for v in refused.violations} == {"compiled"}
    assert check_code(code, name="foo", trust=BENCH, allow_compiled=True).ok


@pytest.mark.parametrize("case", sorted(BENCHMARK_OK))
def test_benchmark_shapes_accepted(case: str) -> None:
    report = check_code(BENCHMARK_OK[case], name="foo", trust=BENCH)
    assert report.ok, (case, report.reason)
    assert report.full_name == "foo"


def test_helper_lemma_may_not_use_sorry() -> None:
    code = BENCHMARK_OK["helper lemma with a proof"].replace("by simp", "by sorry")
    report = check_code(code, name="foo", trust=BENCH)
    assert {v.rule for v in report.violations} == {"sorry"}


def test_column_zero_command_word_still_starts_a_command() -> None:
    code = "import Mathlib\ntheorem foo (x : ℕ) :\nx = x := by sorry\n#eval 1"
    assert not check_code(code, name="foo", trust=BENCH).ok


def test_multi_part_item_each_part_a_target() -> None:
    report = check_code(MULTI_PART, parts=["foo_part1", "foo_part2"], trust=BENCH)
    assert report.ok, report.reason
    assert report.targets == ["foo_part1", "foo_part2"]
    missing = check_code(MULTI_PART, parts=["foo_part1", "foo_part3"], trust=BENCH)
    assert "no theorem named 'foo_part3'" in missing.reason
    # Without the parts named (nor a theorem name), theorems that each end in `sorry` are read
    # as unlabelled parts: accepted with a flag (issue 41 §5).
    unlabelled = check_code(MULTI_PART, trust=BENCH)
    assert unlabelled.ok and [f.rule for f in unlabelled.flags] == ["unlabelled parts"]


async def test_nothing_refused_reaches_lean_and_axioms_cover_the_environment(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    argv = fake_argv("--log", str(log), "--rule", "helper=>uses helper Lean.ofReduceBool")
    backend = ReplBackend.from_config(PoolConfig(argv=argv, size=1))
    checker = LeanChecker(backend, timeout_s=10)
    try:
        items = [
            *(CheckItem(id=k, code=c, name="foo") for k, (c, _) in MEANING.items()),
            *(CheckItem(id=k, code=c, name="foo") for k, c in OPTION_BOMBS.items()),
            *(CheckItem(id=k, code=c, name="foo", trust=BENCH) for k, c in ALWAYS.items()),
        ]
        async for r in checker.check_many(items):
            assert r.status is Status.REJECTED and not r.passed, r.id
        assert requests(log) == []
        # A benchmark's option bomb is compiled with the ceiling, never with 0.
        code = OPTION_BOMBS["maxHeartbeats 0"]
        bomb = await checker.check(CheckItem(id="hb", code=code, name="foo", trust=BENCH))
        assert bomb.status is not Status.REJECTED and bomb.flags[0].rule == "clamped"
        assert "maxHeartbeats 2000000 in" in requests(log)[-1]
        assert "maxHeartbeats 0" not in "".join(requests(log))
        # A benchmark's flagged item compiles, and carries its flags.
        code, _ = MEANING["LT on ℕ"]
        flagged = await checker.check(CheckItem(id="lt", code=code, name="foo", trust=BENCH))
        assert flagged.status is not Status.REJECTED and flagged.flags
        # A context declaration is asked for its axioms too; one that trusts compiled code
        # fails the item although the target does not use it.
        code = "import Mathlib\ndef helper : ℕ := 3\ntheorem foo : True := by sorry"
        r = await checker.check(CheckItem(id="env", code=code, name="foo", trust=BENCH))
        assert not r.passed and "helper depends on Lean.ofReduceBool" in r.reason, r.reason
        sent = requests(log)[-1]
        assert "#print axioms _root_.helper" in sent and "#print axioms _root_.foo" in sent
    finally:
        await backend.close()


@pytest.mark.parametrize("context", ["generated", "benchmark"])
def test_cli_jsonl_and_lean_refuse_before_lean(env: Path, context: str) -> None:
    cases = dict(ALWAYS)
    if context == "generated":
        cases |= {k: c for k, (c, _) in MEANING.items()} | OPTION_BOMBS
    rows = [{"id": k, "name": k, "theorem_name": "foo", "code": c} for k, c in cases.items()]
    # A JSONL field over the one text limit refuses its item (the file and the line named);
    # the file's other items are read and refused item by item.
    limit = 100_000
    big = [i for i, r in enumerate(rows, 1) if len(r["code"]) > limit]
    assert big, "the hostile corpus has an oversized item"
    f = env / "big.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", context, str(f)])
    assert res.exit_code == 1 and f"big.jsonl:{big[0]}" in res.output, res.output
    assert f"{len(rows)} checked: 0 passed, {len(rows)} failed" in res.output
    rows = [r for r in rows if len(r["code"]) <= limit]
    f = env / "items.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", context, str(f)])
    assert res.exit_code == 1, res.output
    assert f"{len(rows)} checked: 0 passed, {len(rows)} failed" in res.output
    for name in ("LT on ℕ", "10 MB statement"):
        if name in cases:
            g = env / "One.lean"
            g.write_text(cases[name])
            args = ["lean", "check", "--no-cache", "--context", context, "--name", "foo", str(g)]
            one = CliRunner().invoke(app, args)
            assert one.exit_code == 1 and "rejected" in one.output, one.output
    assert requests(env / "requests.jsonl") == []


def test_cli_benchmark_context_accepts_and_flags(env: Path) -> None:
    rows = [
        {"id": k, "name": f"item-{i}", "theorem_name": "foo", "code": c}
        for i, (k, c) in enumerate(BENCHMARK_OK.items())
    ]
    rows.append({"id": "lt", "name": "x", "theorem_name": "foo", "code": MEANING["LT on ℕ"][0]})
    rows.append({"id": "parts", "theorem_names": ["foo_part1", "foo_part2"], "code": MULTI_PART})
    f = env / "bench.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    args = ["lean", "check", "--no-cache", "--context", "benchmark", str(f)]
    res = CliRunner().invoke(app, args)
    assert "rejected" not in res.output, res.output
    assert "flag core instance" in res.output, res.output
    assert len(requests(env / "requests.jsonl")) >= len(rows)
