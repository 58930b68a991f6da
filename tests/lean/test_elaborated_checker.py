"""Issue 41 §1 and §4 through the checker, `math2 lean check` and the fake REPL: each spelling
of an explicit instance argument compiles, and math2's own commands show what Lean elaborated —
refused for a model's block, flagged for a person's context; `stop` is a sorry word for
hygiene and for the double; an unreadable answer is "not verified"; no verdict cached before
the rule answers after it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean import elaborated
from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, CheckResult, LeanChecker, Mode, Status
from math2.lean.commands import split_code
from math2.lean.hygiene import check_code
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.lean.testing.fake_repl import Fake
from math2.lean.trust import ContextTrust
from tests.lean.conftest import fake_argv, requests

GEN, BENCH = ContextTrust.GENERATED, ContextTrust.BENCHMARK
WRONG = "fun _ _ => True"
# The spellings: each compiles in Lean and prints as `5 < 3` or `2 + 2 = 5`.
SPELLINGS = {
    "@ with an anonymous constructor": f"@LT.lt ℕ ⟨{WRONG}⟩ 5 3",
    "OfNat with a constructor": "@OfNat.ofNat ℕ (nat_lit 2) ⟨3⟩ + 2 = 5",
    "named instance argument": f"LT.lt (self := ⟨{WRONG}⟩) 5 3",
    "field of an ascribed constructor": f"(⟨{WRONG}⟩ : LT ℕ).lt 5 3",
    "field of a structure literal": f"({{ lt := {WRONG} }} : LT ℕ).lt 5 3",
    "instance made by exact": f"@LT.lt ℕ (by exact ⟨{WRONG}⟩) 5 3",
}
LEGIT = {
    "core instance written out": "theorem foo : @LT.lt ℕ instLTNat 5 3 := by sorry",
    "ascribed numeral": "theorem foo (x : ℝ) (h : (2 : ℝ) < x) : 0 < x := by sorry",
    "instance binder passed on": "theorem foo {α : Type} [inst : LT α] (a : α) : @LT.lt α inst a a"
    " := by sorry",
    "plain statement": "theorem foo (n : ℕ) (h : 0 < n) : 0 < n * n := by sorry",
}


def item(code: str, trust: ContextTrust, key: str = "x") -> CheckItem:
    return CheckItem(id=key, code="import Mathlib\n" + code, name="foo", trust=trust)


def statement(spelling: str) -> str:
    return f"theorem foo : {spelling} := by sorry"


@pytest.fixture
async def checker(tmp_path: Path):
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
    yield LeanChecker(backend, timeout_s=20), log
    await backend.close()


async def test_each_spelling_is_refused_for_a_model_and_flagged_for_a_person(checker) -> None:
    c, log = checker
    for case, spelling in SPELLINGS.items():
        assert check_code("import Mathlib\n" + statement(spelling), name="foo").ok, case
        gen = await c.check(item(statement(spelling), GEN, case))
        assert gen.status is Status.SORRY and not gen.passed, (case, gen.reason)
        assert [v.rule for v in gen.violations] == ["elaborated"], case
        assert "an instance argument of foo's type is" in gen.reason, (case, gen.reason)
        bench = await c.check(item(statement(spelling), BENCH, case))
        assert bench.passed and bench.status is Status.SORRY, (case, bench.reason)
        assert [f.rule for f in bench.flags if f.rule == "elaborated"] == ["elaborated"], case
    sent = [s for s in requests(log) if "theorem" in s]
    assert len(sent) == 2 * len(SPELLINGS)
    # math2's own commands followed every block: the explicit type and the instance table
    assert all("set_option pp.instanceTypes true in" in s for s in sent)
    assert all("_root_.Lean.Meta.isInstance" in s for s in sent)


async def test_legitimate_statements_pass_with_no_flag(checker) -> None:
    c, _ = checker
    for case, code in LEGIT.items():
        for trust in (GEN, BENCH):
            r = await c.check(item(code, trust, case))
            assert r.passed and r.status is Status.SORRY, (case, trust, r.reason)
            assert not [f for f in r.flags if f.rule == "elaborated"], (case, r.flags)
    group = "variable {G : Type*} [Group G] (g h : G)\ntheorem foo : g * h = h * g := by sorry"
    r = await c.check(item(group, BENCH))
    assert r.passed and not [f for f in r.flags if f.rule == "elaborated"], r.reason


async def test_a_flag_survives_the_cache_and_the_rule_version_keys_it(checker) -> None:
    c, _ = checker
    store: dict[str, CheckResult] = {}

    class Cache:
        def get(self, key: str) -> CheckResult | None:
            return store.get(key)

        def put(self, key: str, result: CheckResult, identity: LeanIdentity) -> None:
            store[key] = result

    c.cache = Cache()
    code = statement(SPELLINGS["@ with an anonymous constructor"])
    first = await c.check(item(code, BENCH))
    again = await c.check(item(code, BENCH))
    assert again.cached and [f.rule for f in again.flags] == [f.rule for f in first.flags]
    assert "elaborated" in {f.rule for f in again.flags}
    # the level is part of the key: a person's verdict never answers for a model
    gen = await c.check(item(code, GEN))
    assert not gen.cached and not gen.passed
    # a verdict cached under another version of the rule does not answer
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("math2.lean.checker.ELABORATED_RULE", "elaborated-statement-0")
        older = await c.check(item(code, BENCH))
    assert not older.cached and len(store) == 3


async def test_an_unreadable_answer_through_the_checker_is_not_verified(tmp_path: Path) -> None:
    code = "import Mathlib\ntheorem foo : 1 = 1 := by sorry"
    it = CheckItem(id="u", code=code, name="foo")
    probe = LeanChecker(ReplBackend.from_config(PoolConfig(argv=fake_argv(), size=1)))
    plan = probe._compiled(it, split_code(code))
    check_line, eval_line = sorted(plan.asked)
    axioms_line = check_line - 1

    def msg(line: int, data: str, severity: str = "info") -> dict:
        pos = {"line": line, "column": 0}
        return {"severity": severity, "pos": pos, "endPos": pos, "data": data}

    frames = [
        {"env": 0},
        {
            "messages": [
                msg(axioms_line, "'foo' depends on axioms: [sorryAx]"),
                msg(check_line, "@foo : @Eq.{1} Nat ⋯ ⋯"),  # elided: math2 cannot read it
                msg(eval_line, "math2-instances foo:"),
            ],
            "env": 1,
        },
    ]
    replay = tmp_path / "r.expected.out"
    replay.write_text("\n\n".join(json.dumps(f) for f in frames) + "\n\n")
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--replay", str(replay)), size=1))
    try:
        r = await LeanChecker(backend, timeout_s=20).check(it)
    finally:
        await backend.close()
    assert not r.passed and r.status is Status.OK  # compiled; the reading failed
    assert r.reason.startswith("not verified: the elaborated type of foo cannot be read")
    assert "elided" in r.reason


def _fake() -> Fake:
    return Fake(argparse.Namespace(header_delay=0.0, check_delay=0.0, wording="new"))


def _asked(code: str, trust: ContextTrust = GEN) -> elaborated.Reading:
    """The double's answer to math2's commands after `code`, judged."""
    fake = _fake()
    out = fake.command({"cmd": code + "\n" + "\n".join(elaborated.commands_for("foo")) + "\n"})
    lines = code.count("\n") + 2
    answer = elaborated.Answer()
    for m in out.get("messages", []):
        if m["pos"]["line"] >= lines:
            from math2.lean.diagnostics import Diagnostic, Kind

            d = Diagnostic(kind=Kind.OUTPUT, severity=m["severity"], message=m["data"])
            elaborated.take(answer, d)
    return elaborated.judge("foo", answer, declared=["foo"], trust=trust, notation=True)


def test_stop_is_a_sorry_word_for_hygiene_and_the_double() -> None:
    in_type = "import Mathlib\ntheorem foo : ∀ n : ℕ, n < (by stop exact 0) := by sorry"
    for trust in (GEN, BENCH):
        report = check_code(in_type, name="foo", trust=trust)
        assert not report.ok and "`stop` outside the proof" in report.reason, report.reason
    # the double: `stop` marks the declaration as using sorry, like Lean
    out = _fake().command({"cmd": "theorem foo : 1 = 1 := by stop rfl\n#print axioms foo"})
    said = [m["data"] for m in out["messages"]]
    assert "declaration uses `sorry`" in said and any("sorryAx" in s for s in said), said
    # in statement mode Lean accepts the type built on sorryAx: the elaborated reading refuses it
    r = _asked("theorem foo : ∀ n : ℕ, n < (by stop exact 0) := by sorry", BENCH)
    assert r.refusals and "built on `sorry`" in r.refusals[0].detail


def test_the_proof_check_refuses_stop(tmp_path: Path) -> None:
    code = "import Mathlib\ntheorem foo : 1 = 1 := by stop rfl"
    it = CheckItem(id="p", code=code, name="foo", mode=Mode.PROOF)
    import asyncio

    async def run() -> None:
        log = tmp_path / "p.jsonl"
        backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
        try:
            r = await LeanChecker(backend, timeout_s=20).check(it)
        finally:
            await backend.close()
        assert not r.passed
        assert r.status is Status.REJECTED and requests(log) == []  # refused before Lean

    asyncio.run(run())


def test_the_double_knows_a_name_only_auto_binding_would_bind() -> None:
    pre = "set_option autoImplicit false\nset_option relaxedAutoImplicit false\n"
    out = _fake().command({"cmd": pre + "theorem foo : n + 0 = n := by sorry"})
    errors = [m["data"] for m in out["messages"] if m["severity"] == "error"]
    assert errors == ["Unknown identifier `n`"]
    for fine in (
        "theorem foo (n : ℕ) : n + 0 = n := by sorry",
        "theorem foo : ∀ n : ℕ, n + 0 = n := by sorry",
        "variable (n : ℕ)\ntheorem foo : n + 0 = n := by sorry",
    ):
        out = _fake().command({"cmd": pre + fine})
        assert not [m for m in out.get("messages", []) if m["severity"] == "error"], fine
    # without the option, Lean binds it automatically
    out = _fake().command({"cmd": "theorem foo : n + 0 = n := by sorry"})
    assert not [m for m in out.get("messages", []) if m["severity"] == "error"]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_cli_refuses_for_a_model_and_flags_for_a_person(env: Path) -> None:
    rows = [
        {"id": k, "theorem_name": "foo", "code": "import Mathlib\n" + statement(s)}
        for k, s in SPELLINGS.items()
    ]
    n = len(rows)
    stop = statement("∀ n : ℕ, n < (by stop exact 0)")
    rows.append({"id": "stop", "theorem_name": "foo", "code": "import Mathlib\n" + stop})
    f = _jsonl(env / "inst.jsonl", rows)
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", "generated", str(f)])
    assert res.exit_code == 1, res.output
    assert f"{n + 1} checked: 0 passed, {n + 1} failed" in res.output, res.output
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", "benchmark", str(f)])
    assert res.exit_code == 1, res.output  # `stop` in a type is refused at both levels
    assert f"{n + 1} checked: {n} passed, 1 failed" in res.output, res.output
    assert "elaborated" in res.output and "`stop` outside the proof" in res.output, res.output
    sent = requests(env / "requests.jsonl")
    assert not [c for c in sent if "by stop" in c]  # nothing refused reached Lean
    assert len([c for c in sent if "set_option pp.instanceTypes true in" in c]) == 2 * n


@pytest.mark.data("lean-repl-transcripts")
async def test_the_repls_own_mathlib_statements_pass_with_no_elaborated_flag(checker) -> None:
    import re

    from tests.data_conformance import real_data

    c, _ = checker
    found: dict[str, str] = {}
    for path in sorted(real_data("lean-repl-transcripts").glob("mathlib_*.in")):
        for frame in path.read_text().split("\n\n"):
            cmd = json.loads(frame, strict=False).get("cmd", "") if frame.strip() else ""
            m = re.search(r"theorem (\S+)(.*?):=\s*by", cmd, re.S)
            if m and m.group(1) not in found:
                found[m.group(1)] = f"theorem {m.group(1)}{m.group(2)}:= by sorry"
    assert len(found) >= 5, found
    checked = 0
    for name, code in found.items():
        for trust in (GEN, BENCH):
            it = CheckItem(id=name, code="import Mathlib\n" + code, name=name, trust=trust)
            if not check_code(it.code, name=name, trust=trust).ok:
                continue  # hygiene's verdict is not this test's subject
            r = await c.check(it)
            assert r.passed and not [f for f in r.flags if f.rule == "elaborated"], (name, r.reason)
            checked += 1
    assert checked >= 5


async def test_math2s_commands_read_the_target_through_a_shadowing_namespace(checker) -> None:
    """A person's context leaves `namespace Foo` open and declares `Foo.Foo.t` before the
    target `Foo.t`: written bare, math2's `#print axioms Foo.t` and `#check @Foo.t` would read
    `Foo.Foo.t` (Lean looks in the innermost open namespace first, and so does the double); under
    `_root_` they read the target."""
    c, log = checker
    code = (
        "namespace Foo\n"
        "theorem Foo.t : True := trivial\n"
        "theorem t (n : ℕ) (h : 0 < n) : 0 < n * n := by sorry\n"
    )
    r = await c.check(CheckItem(id="ns", code="import Mathlib\n" + code, name="Foo.t", trust=BENCH))
    assert r.passed and r.status is Status.SORRY, r.reason
    assert not [f for f in r.flags if f.rule == "elaborated"], r.flags
    sent = next(s for s in requests(log) if "theorem t" in s)
    assert "#print axioms _root_.Foo.t" in sent and "#check @_root_.Foo.t" in sent
