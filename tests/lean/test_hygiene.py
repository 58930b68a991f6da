"""Statement hygiene: hostile snippets are refused with the reason; real statements pass."""

import json

import pytest

from math2.lean.compiled import (
    axiom_violations,
    parse_axioms,
    prepare,
)
from math2.lean.hygiene import (
    ContextTrust,
    check_code,
    check_statement,
    split_header,
)
from math2.lean.lexer import LexError, tokenize
from tests.conftest import benchmark_fixtures

OK = "theorem foo (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by sorry"

HOSTILE = {
    "eval shell": '#eval IO.Process.run { cmd := "sh", args := #["-c", "id"] }\n' + OK,
    "eval hidden after": OK + '\n#eval (IO.getEnv "HOME")',
    "redefine R": "def ℝ := ℕ\n" + OK,
    "notation R": 'notation "ℝ" => ℕ\n' + OK,
    "local notation": 'local notation "ℝ" => ℕ\n' + OK,
    "axiom": "axiom cheat : False\n" + OK,
    "proof by axiom": "axiom cheat : False\ntheorem foo : 1 = 2 := cheat.elim",
    "real proof": "theorem foo : 1 = 1 := rfl",
    "instance": "instance : Fact (1 = 2) := ⟨sorry⟩\n" + OK,
    "macro sorry": 'macro "sorry" : tactic => `(tactic| rfl)\n' + OK,
    "elab": 'open Lean Elab in\nelab "evil" : tactic => pure ()\n' + OK,
    "syntax": 'syntax "evil" : term\n' + OK,
    "run_cmd": "run_cmd pure ()\n" + OK,
    "exit": OK + "\n#exit",
    "unsafe": "unsafe def f : Nat := 0\n" + OK,
    "extern": '@[extern "system"] opaque sys : Unit → Unit\n' + OK,
    "implemented_by": "@[implemented_by foo] def g := 1\n" + OK,
    "skip kernel": "set_option debug.skipKernelTC true\n" + OK,
    "auto implicit": "set_option autoImplicit true\n" + OK,
    "attribute extern": 'attribute [extern "c"] foo\n' + OK,
    "two theorems": OK + "\ntheorem bar : True := sorry",
    "sorry in statement": "theorem foo : sorry := sorry",
    "bidi": "theorem foo : 1 = 1 \u202e:= by sorry",
    "zero width": "theorem foo\u200b : 1 = 1 := by sorry",
    "IO in statement": "theorem foo : IO.FS.Stream = IO.FS.Stream := sorry",
    "unterminated comment": "/- open\n" + OK,
    "example": "example : 1 = 1 := sorry",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_snippets_are_refused_with_a_reason(case: str) -> None:
    report = check_statement(HOSTILE[case], name="foo")
    assert not report.ok, case
    assert report.reason


def test_reasons_name_the_rule_and_line() -> None:
    report = check_statement("axiom cheat : False\n" + OK, name="foo")
    assert "axiom" in report.reason and "line 1" in report.reason
    report = check_statement(OK, name="bar")
    assert "expected 'bar'" in report.reason


@pytest.mark.parametrize(
    "text",
    [
        OK,
        "theorem foo : 1 = 1 := sorry",
        "theorem foo : 1 = 1 := by\n  sorry",
        "open Real in\ntheorem foo : π > 0 := by sorry",
        "namespace A\nopen scoped BigOperators\ntheorem foo : True := by sorry\nend A",
        "-- #eval in a comment\n/- axiom in /- a nested -/ block -/\n" + OK,
        '/-- doc mentioning `#eval` and "axiom" -/\n' + OK,
        "set_option maxHeartbeats 400000 in\n" + OK,
        "variable {G : Type*} [Group G]\ntheorem foo (g : G) : g * 1 = g := by sorry",
        "noncomputable section\n" + OK + "\nend",
        'theorem foo (s : String := "#eval") : s = s := by sorry',
        "theorem foo : |(1 : ℝ)| = 1 := by sorry",
    ],
)
def test_clean_statements_pass(text: str) -> None:
    assert check_statement(text, name="foo", trust=ContextTrust.BENCHMARK).ok
    report = check_statement(text, name="foo")  # a model's block: no options
    assert report.ok is not text.startswith("set_option"), report.reason
    assert report.theorem_name == "foo"


def test_import_allowlist() -> None:
    assert not check_statement(
        OK, name="foo", header="import Evil", allowed_imports=frozenset({"Mathlib"})
    ).ok
    assert check_statement(
        OK, name="foo", header="import Mathlib", allowed_imports=frozenset({"Mathlib"})
    ).ok


def test_real_benchmark_statements_pass() -> None:
    path = benchmark_fixtures() / "minif2f.jsonl"
    items = [json.loads(line) for line in path.read_text().splitlines()]
    for it in items:
        _, rest = split_header(it["header"])
        report = check_statement(
            rest + it["formal_statement"] + " sorry", name=it["name"], trust=ContextTrust.BENCHMARK
        )
        assert report.ok, (it["name"], report.reason)
    fate = json.loads((benchmark_fixtures() / "fate_m.json").read_text())
    for it in fate:
        _, body = split_header(it["formal_statement"])
        assert check_statement(body, trust=ContextTrust.BENCHMARK).ok, it["id"]


def test_split_header() -> None:
    header, body = split_header(
        "-- c\nimport Mathlib\nimport Aesop\n\nopen Real\ntheorem x : True := sorry"
    )
    assert header == "import Mathlib\nimport Aesop"
    assert body.startswith("open Real")


def test_preamble_turns_auto_implicit_off() -> None:
    assert prepare(OK).startswith("set_option autoImplicit false\n")


def test_axioms() -> None:
    assert parse_axioms("'foo' depends on axioms: [propext, sorryAx]") == {"propext", "sorryAx"}
    assert parse_axioms("'foo' does not depend on any axioms") == set()
    assert parse_axioms("something else") is None
    assert axiom_violations({"propext", "Classical.choice", "Quot.sound", "sorryAx"}) == []
    [v] = axiom_violations({"propext", "cheat"})
    assert "cheat" in v.detail


def test_lexer_positions_and_errors() -> None:
    toks = tokenize("theorem «a b».c\n  : x := 'x'")
    assert [(t.text, t.line) for t in toks][:2] == [("theorem", 1), ("«a b».c", 1)]
    with pytest.raises(LexError) as info:
        tokenize('def s := "open')
    assert info.value.line == 1


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "tactic 'rewrite' failed, did not find instance of the pattern in the target "
            "expression\n  a + b",
            "rewrite_failed",
        ),
        ("motive is not type correct:\n  fun _a => P _a", "motive_not_type_correct"),
        ("function expected at\n  f\nterm has type\n  ℕ", "function_expected"),
        ("Try this: set_option maxHeartbeats 400000 in", "suggestion"),
        (
            "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000)",
            "heartbeat_timeout",
        ),
    ],
)
def test_new_diagnostic_kinds(text: str, kind: str) -> None:
    from math2.lean import classify_text

    assert classify_text(text)[0].value == kind


def test_every_benchmark_theorem_is_accepted() -> None:
    """miniF2F, ProofNet and FATE-M: all one-theorem items pass; the refusals are `def` targets."""
    refused = []
    for name in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (benchmark_fixtures() / name).read_text().splitlines():
            it = json.loads(line)
            code = it["header"] + it["formal_statement"].rstrip() + " sorry"
            if not check_code(code, trust=ContextTrust.BENCHMARK).ok:
                refused.append(it["formal_statement"])
    for it in json.loads((benchmark_fixtures() / "fate_m.json").read_text()):
        assert check_code(it["formal_statement"], trust=ContextTrust.BENCHMARK).ok, it["id"]
    assert len(refused) == 1  # the fixture's `def` item
    assert all(s.lstrip().startswith(("def ", "noncomputable def ")) for s in refused)
