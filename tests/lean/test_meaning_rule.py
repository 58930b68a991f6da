"""Issue 34 through `check_code`, the checker over the fake REPL and `math2 lean check` at both
levels: a model's block may change the environment only by its target (every other change is
refused with its rule, line and column, and never reaches Lean: the fake REPL's log); a person's
context is accepted with flags it cannot escape, each with a true reason; theorems named as Lean
prints names, multi-part items and instance items pass the compiled check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Status
from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.pool import PoolConfig
from tests.lean.conftest import fake_argv, requests
from tests.lean.issue34_corpus import (
    BENCHMARK_FLAGGED,
    GENERATED_ACCEPTED,
    GENERATED_REFUSED,
    INSTANCE_ITEM,
    KNOWN_NAMES,
    LIBRARY_SHADOWING,
    MULTI_PART,
    MULTI_PART_NAMES,
    NAMED,
    TRUE_REASONS,
)
from tests.lean.library_fixture import LIBRARY

BENCH = ContextTrust.BENCHMARK


known = LIBRARY  # the library's tables (KNOWN_NAMES are among its names)


def test_the_fixture_library_declares_the_known_names() -> None:
    assert all(LIBRARY(n) for n in KNOWN_NAMES) and not LIBRARY("Real.nosuch")


@pytest.mark.parametrize("case", sorted({**GENERATED_REFUSED, **LIBRARY_SHADOWING}))
def test_a_models_block_that_changes_the_environment_is_refused_in_place(case: str) -> None:
    code = {**GENERATED_REFUSED, **LIBRARY_SHADOWING}[case]
    report = check_code(code, name="foo", known_name=known)
    assert not report.ok, case
    # the rule of the meaning rule (`generated`), of the caps (`size`), or of the grammar every
    # level applies (a notation command) where that one refuses the same place first
    assert {v.rule for v in report.violations} <= {"generated", "size", "command", "modifier"}
    for v in report.violations:
        assert v.line is not None and v.line >= 2 and v.column is not None, (case, v)
        assert v.detail


@pytest.mark.parametrize("case", sorted(GENERATED_ACCEPTED))
def test_a_models_block_may_bind_objects_and_classes_over_them(case: str) -> None:
    report = check_code(GENERATED_ACCEPTED[case], name="foo", known_name=known)
    assert report.ok, (case, report.reason)


def test_deep_prefix_nesting_is_refused_before_lean_in_milliseconds() -> None:
    import time

    t0 = time.process_time()
    report = check_code(GENERATED_REFUSED["deep prefix nesting"], name="foo", trust=BENCH)
    assert time.process_time() - t0 < 2.0
    assert [v.rule for v in report.violations] == ["size"], report.reason
    assert "operators nest" in report.reason


def test_nesting_is_counted_along_the_path_not_reset_at_each_bracket() -> None:
    # 40 levels of 1,990 `¬`: 79,600 deep, under the per-level count and the bracket cap
    report = check_code(GENERATED_REFUSED["prefix nesting spread over brackets"], trust=BENCH)
    assert [v.rule for v in report.violations] == ["size"], report.reason
    # a long statement whose brackets each hold a few operators is not a deep one
    flat = "import Mathlib\ntheorem foo : " + " ∧ ".join(["(1 + 1 = 2)"] * 600) + " := by sorry"
    assert check_code(flat, name="foo").ok


def test_a_part_that_is_an_instance_on_a_core_type_is_flagged_for_the_parts_after_it() -> None:
    # the prover chooses the instance of part one (`LT ℕ` with `True`), then proves part two
    code = "import Mathlib\ninstance p1 : LT ℕ := by sorry\ntheorem p2 : (3 : ℕ) < 2 := by sorry"
    report = check_code(code, parts=["p1", "p2"], trust=BENCH)
    assert report.ok, report.reason
    assert [(f.rule, f.line) for f in report.flags] == [("core instance", 2)], report.flags
    # the last part may be an instance (FATE-M's shape): nothing after it uses it
    assert check_code(INSTANCE_ITEM, trust=BENCH).flags == []


@pytest.mark.parametrize("case", sorted(GENERATED_ACCEPTED))
def test_variables_of_objects_and_classes_over_them_raise_no_flag(case: str) -> None:
    report = check_code(GENERATED_ACCEPTED[case], name="foo", trust=BENCH, known_name=known)
    assert report.ok and report.flags == [], (case, report.flags)


@pytest.mark.parametrize("case", sorted(BENCHMARK_FLAGGED))
def test_a_persons_context_is_accepted_and_flagged(case: str) -> None:
    code, flag = BENCHMARK_FLAGGED[case]
    report = check_code(code, name="foo", trust=BENCH, known_name=known)
    assert report.ok, (case, report.reason)
    assert flag in {f.rule for f in report.flags}, (case, report.flags)
    for f in report.flags:
        assert f.line is not None and f.column is not None and f.detail


def test_without_the_name_table_a_library_name_is_not_claimed() -> None:
    code, _ = BENCHMARK_FLAGGED["def shadowing the library"]
    report = check_code(code, name="foo", trust=BENCH)
    assert all("library declares" not in f.detail for f in report.flags)


@pytest.mark.parametrize("case", sorted(TRUE_REASONS))
def test_each_flags_reason_is_true_for_the_item(case: str) -> None:
    code, rule, says, never = TRUE_REASONS[case]
    report = check_code(code, name="foo", trust=BENCH)
    found = [f for f in report.flags if f.rule == rule]
    assert found and all(says in f.detail and never not in f.detail for f in found), report.flags
    assert not [f for f in report.flags if f.rule == "core instance" and never == "core"]


@pytest.mark.parametrize("name", sorted(NAMED))
@pytest.mark.parametrize("trust", list(ContextTrust))
def test_names_lean_prints_are_accepted(name: str, trust: ContextTrust) -> None:
    report = check_code(NAMED[name], name=name, trust=trust)
    assert report.ok and report.full_name == name, report.reason


def test_multi_part_and_instance_items_are_targets() -> None:
    multi = check_code(MULTI_PART, parts=MULTI_PART_NAMES, trust=BENCH)
    assert multi.ok and multi.targets == MULTI_PART_NAMES, multi.reason
    inst = check_code(INSTANCE_ITEM, trust=BENCH)
    assert inst.ok and inst.targets == ["comm_of_card_two"], inst.reason
    # A model's block states theorems: an instance is not its target.
    assert not check_code(INSTANCE_ITEM).ok


async def test_the_checker_over_the_fake_repl(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
    checker = LeanChecker(backend, timeout_s=20, known_name=known)
    try:
        every = {**GENERATED_REFUSED, **LIBRARY_SHADOWING}
        refused = [CheckItem(id=k, code=c, name="foo") for k, c in every.items()]
        async for r in checker.check_many(refused):
            assert r.status is Status.REJECTED and not r.passed and r.violations, r.id
        assert requests(log) == []  # nothing refused reached Lean
        for trust in ContextTrust:
            for name, code in NAMED.items():
                r = await checker.check(CheckItem(id=name, code=code, name=name, trust=trust))
                assert r.passed and r.status is Status.SORRY, (name, trust, r.reason)
                assert r.axioms is not None and "sorryAx" in r.axioms
            for case, code in GENERATED_ACCEPTED.items():
                r = await checker.check(CheckItem(id=case, code=code, name="foo", trust=trust))
                assert r.passed, (case, r.reason)
        item = CheckItem(id="parts", code=MULTI_PART, parts=MULTI_PART_NAMES, trust=BENCH)
        multi = await checker.check(item)
        assert multi.passed, multi.reason  # every part may end in sorry; `f` does not
        inst = await checker.check(CheckItem(id="inst", code=INSTANCE_ITEM, trust=BENCH))
        assert inst.passed, inst.reason
        for case, (code, flag) in BENCHMARK_FLAGGED.items():
            r = await checker.check(CheckItem(id=case, code=code, name="foo", trust=BENCH))
            assert r.status is not Status.REJECTED and flag in {f.rule for f in r.flags}, case
        sent = "\n".join(requests(log))
        assert "#print axioms _root_.«two plus two»" in sent
        assert "#print axioms _root_.mul_inv_cancel'" in sent
    finally:
        await backend.close()


async def test_a_class_inductive_is_declared_under_its_own_name(tmp_path: Path) -> None:
    # `class inductive K` declares K (not a constant named `inductive` to ask the axioms of)
    code = (
        "import Mathlib\nclass inductive K : Prop where\n  | mk\ntheorem foo [K] : True := by sorry"
    )
    report = check_code(code, name="foo", trust=BENCH)
    assert report.ok and report.declared == ["K", "foo"], (report.reason, report.declared)
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
    try:
        checker = LeanChecker(backend, timeout_s=20)
        r = await checker.check(CheckItem(id="k", code=code, name="foo", trust=BENCH))
        assert r.passed and r.status is Status.SORRY, r.reason
        assert "#print axioms _root_.K" in "\n".join(requests(log))
    finally:
        await backend.close()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_cli_generated_level_refuses_before_lean(env: Path) -> None:
    rows = [{"id": k, "theorem_name": "foo", "code": c} for k, c in GENERATED_REFUSED.items()]
    f = _jsonl(env / "gen.jsonl", rows)
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", "generated", str(f)])
    assert res.exit_code == 1, res.output
    assert f"{len(rows)} checked: 0 passed, {len(rows)} failed" in res.output
    assert "rejected" in res.output and "generated" in res.output
    assert requests(env / "requests.jsonl") == []
    one = env / "One.lean"
    one.write_text(GENERATED_REFUSED["false instance variable"])
    args = ["lean", "check", "--no-cache", "--name", "foo", str(one)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1 and "line 2, column 9" in res.output, res.output
    assert requests(env / "requests.jsonl") == []


@pytest.mark.parametrize("context", ["generated", "benchmark"])
def test_cli_names_lean_prints_pass_at_both_levels(env: Path, context: str) -> None:
    rows = [{"id": f"n{i}", "theorem_name": n, "code": c} for i, (n, c) in enumerate(NAMED.items())]
    rows += [{"id": k, "theorem_name": "foo", "code": c} for k, c in GENERATED_ACCEPTED.items()]
    f = _jsonl(env / "names.jsonl", rows)
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", context, str(f)])
    assert res.exit_code == 0, res.output
    assert f"{len(rows)} checked: {len(rows)} passed" in res.output


def test_cli_benchmark_level_flags_and_passes_parts_and_instances(env: Path) -> None:
    rows = [
        {"id": k, "theorem_name": "foo", "code": c}
        for k, (c, _) in BENCHMARK_FLAGGED.items()
        if "Mathlib type" not in k  # `sorry_free` is not a constant of the fake's library
    ]
    rows.append({"id": "parts", "theorem_names": MULTI_PART_NAMES, "code": MULTI_PART})
    rows.append({"id": "inst", "code": INSTANCE_ITEM})
    f = _jsonl(env / "bench.jsonl", rows)
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", "benchmark", str(f)])
    assert "rejected" not in res.output, res.output
    for flag in ("core instance", "notation", "look-alike"):
        assert f"flag {flag}" in res.output, (flag, res.output)
    assert len(requests(env / "requests.jsonl")) >= len(rows)
    verdicts = {
        ln.split()[1]: ln.split()[0] for ln in res.output.splitlines() if ln[:4] in ("pass", "FAIL")
    }
    assert verdicts["parts"] == "pass" and verdicts["inst"] == "pass", res.output
    assert res.exit_code == 0 and f"{len(rows)} passed" in res.output, res.output
