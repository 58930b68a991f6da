"""Each lint on small pairs that should and should not be flagged."""

from __future__ import annotations

import pytest

from math2.checks import Pair, make_check
from math2.checks.lints import LINTS, lint_all
from math2.checks.statement import StatementError, parse_statement
from math2.store.work import Verdict


def run(name: str, formal: str, informal: str = "Let $x$ be a real number.") -> tuple:
    o = make_check(name).check(Pair(id="t", informal=informal, formal=formal))
    return o.verdict, o.evidence.get("findings", [])


def test_statement_parser_reads_binders_and_goal():
    st = parse_statement(
        "import Mathlib\n/-- doc with theorem inside -/\n"
        "theorem foo {G : Type*} [Group G] (x y : ℝ) (h₀ : 0 < x) (hf : Continuous f) :\n"
        "  x + y = y + x := by sorry"
    )
    assert st.name == "foo"
    assert list(st.variables) == ["G", "x", "y"]
    assert [n for n, _ in st.hypotheses] == ["h₀", "hf"]
    assert " ".join(t.text for t in st.goal) == "x + y = y + x"
    with pytest.raises(StatementError, match="no theorem"):
        parse_statement("-- theorem t : True\nexample_not : x")
    with pytest.raises(StatementError, match="unbalanced"):
        parse_statement("theorem t (x : ℕ : x = x")
    with pytest.raises(StatementError):
        parse_statement('theorem t : "unterminated')


def test_unused_hypothesis():
    v, f = run("lint.unused_hypothesis", "theorem t (x y : ℝ) (h : 0 < y) : x ^ 2 ≥ 0 := by")
    assert v is Verdict.FAIL and "shares no variable" in f[0]
    v, f = run("lint.unused_hypothesis", "theorem t (x : ℝ) (h : 2 < 3) : x ^ 2 ≥ 0 := by")
    assert v is Verdict.FAIL and "mentions no variable" in f[0]
    # linked through another hypothesis, through a variable's type, through an instance
    ok = [
        "theorem t (x y z : ℝ) (h₁ : y = z) (h₂ : x = y) : x = z := by",
        "theorem t {V : Type*} (S : Set V) (hS : S.Countable) {ι : Type*} (R : ι → V) "
        ": Countable ι := by",
        "theorem t {A : Type*} [CommRing A] {p : ℕ} [CharP A p] {a : A} (hp : p.Prime) "
        ": a = a := by",
        "theorem t {G : Type*} [Group G] (hp : p.Prime) (h : Fintype.card G = p) : "
        "IsCyclic G := by",  # auto-bound p
    ]
    for formal in ok:
        assert run("lint.unused_hypothesis", formal)[0] is Verdict.PASS, formal


def test_restated_conclusion():
    v, f = run("lint.restated_conclusion", "theorem t (x : ℝ) (h : 0 < x) : (0 < x) := by")
    assert v is Verdict.FAIL and f == ["h : 0 < x is the goal"]
    v, _ = run("lint.restated_conclusion", "theorem t (a b : ℕ) (h : a < b ∧ 0 < a) : a < b := by")
    assert v is Verdict.FAIL
    v, _ = run("lint.restated_conclusion", "theorem t (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by")
    assert v is Verdict.PASS


def test_nat_arith():
    real_text = "Let $a$ and $b$ be real numbers. Show that $a - b$ is at most $a$."
    v, f = run("lint.nat_arith", "theorem t (a b : ℕ) : a - b ≤ a := by", real_text)
    assert v is Verdict.FAIL and "ℕ subtraction `a - b`" in f[0]
    # no cue in the text: natural numbers are what it means
    nat_text = "Let $a$ and $b$ be positive integers. Show that $a - b \\le a$."
    assert run("lint.nat_arith", "theorem t (a b : ℕ) : a - b ≤ a := by", nat_text)[0] is (
        Verdict.PASS
    )
    # a cast, a real ascription, a real function's argument, a guard
    for formal in [
        "theorem t (a b : ℕ) : ((a : ℝ) - b) ≤ a := by",
        "theorem t (a b : ℕ) : (a - b : ℝ) ≤ a := by",
        "theorem t (a b : ℕ) : Real.sqrt (a / b) ≥ 0 := by",
        "theorem t (a b : ℕ) (h : b ≤ a) : a - b ≤ a := by",
        "theorem t (n : ℕ) (h : 3 ≤ n) : n - 1 ≥ 2 := by",
        "theorem t (n : ℕ) (h : n < 101) (h₁ : 101 ∣ 123456 - n) : n = 34 := by",
        "theorem t (m n : ℕ) (h : m - n = 2) : m = n + 2 := by",
    ]:
        assert run("lint.nat_arith", formal, real_text)[0] is Verdict.PASS, formal
    # numerals divided in an exponent: floor division whatever the text says
    v, f = run("lint.nat_arith", "theorem t (x : ℝ) : (8 : ℝ) ^ (1 / 3) = 2 := by", "Cube root.")
    assert v is Verdict.FAIL and "exponent" in f[0]
    assert run("lint.nat_arith", "theorem t : (8 : ℝ) ^ (1 / 3 : ℝ) = 2 := by")[0] is (Verdict.PASS)


def test_trivial_goal():
    cases = {
        "theorem t : True := by": "the goal is True",
        "theorem t (x : ℝ) : x + 1 = x + 1 := by": "reflexivity",
        "theorem t (x : ℝ) (h : False) : x = 2 := by": "h : False",
        "theorem t (x : ℝ) (h : x < x) : x = 2 := by": "is false",
        "theorem t (x : ℝ) (h : 3 < 2) : x = 2 := by": "is false",
        "theorem t (x y : ℝ) (h₁ : x < y) (h₂ : y ≤ x) : x = 2 := by": "contradict",
        "theorem t (x y : ℝ) (h₁ : x < y) (h₂ : x ≥ y) : x = 2 := by": "contradict",
        "theorem t (x y : ℝ) (h₁ : x = y) (h₂ : x ≠ y) : x = 2 := by": "contradict",
        "theorem t (p : Prop) (h₁ : p) (h₂ : ¬ p) : 1 = 2 := by": "P and ¬P",
    }
    for formal, why in cases.items():
        v, f = run("lint.trivial_goal", formal)
        assert v is Verdict.FAIL and any(why in x for x in f), (formal, f)
    for formal in [
        "theorem t (x y : ℝ) (h₁ : x < y) (h₂ : y < x + 1) : x = 2 := by",
        "theorem t (x : ℝ) (h : 2 < 3) : x + 1 = 1 + x := by",
    ]:
        assert run("lint.trivial_goal", formal)[0] is Verdict.PASS, formal


def test_no_shared_objects():
    informal = "Prove that for every prime $p$, $p^2 + 2$ is not divisible by $9$."
    v, f = run("lint.no_shared_objects", "theorem t (a : ℝ) (h : 0 < a) : a > -1 := by", informal)
    assert v is Verdict.FAIL and "no shared object" in f[0]
    for formal in [
        "theorem t (p : ℕ) (hp : p.Prime) : ¬ 9 ∣ p ^ 2 + 2 := by",  # variable
        "theorem t (q : ℕ) (hq : Nat.Prime q) : True := by",  # word "prime"
    ]:
        assert run("lint.no_shared_objects", formal, informal)[0] is Verdict.PASS
    # words map to blackboard types
    v, _ = run(
        "lint.no_shared_objects",
        "theorem t {n : ℤ} {r s : ℚ} (h : r^2 + s^2 = n) : ∃ a b : ℤ, a^2 + b^2 = n := by",
        "If an integer is the sum of two rational squares, so it is of two integer squares.",
    )
    assert v is Verdict.PASS


def test_unreadable_statement_is_an_error_never_a_pass():
    outs = lint_all(Pair(id="x", informal="anything", formal="not lean at all"))
    assert [o.check for o in outs] == LINTS
    assert all(o.verdict is Verdict.ERROR and "unreadable" in o.evidence["reason"] for o in outs)


def test_definitions_of_predicates_are_not_statements():
    outs = lint_all(
        Pair(id="d", informal="a property of $n$", formal="def D (n : ℕ) (h : 0 < n) : Prop")
    )
    outs = [o for o in outs if o.check != "lint.formal_echo"]  # that one reads any declaration
    assert all(o.verdict is Verdict.SKIP and "definition" in o.evidence["reason"] for o in outs)
    # a definition whose type is a proposition-like object is still read (ProofNet's `def`s)
    outs = lint_all(Pair(id="d", informal="$G$ is $S_3$", formal="def e (G : Type*) : G ≃* G :="))
    assert {o.verdict for o in outs} <= {Verdict.PASS, Verdict.FAIL}


def test_formal_echo():
    formal = "def Tiny (n : ℕ) : Prop"
    for text in [
        "The Lean 4 declaration is:\n```\ndef Chain.Tiny (n : ℕ) : Prop\n```",
        "We have def Tiny (n : ℕ) : Prop as stated.",
    ]:
        o = make_check("lint.formal_echo").check(Pair(id="e", informal=text, formal=formal))
        assert o.verdict is Verdict.FAIL, text
    ok = "A natural number $n$ is tiny when $n < 3$."
    o = make_check("lint.formal_echo").check(Pair(id="e", informal=ok, formal=formal))
    assert o.verdict is Verdict.PASS


def test_lints_read_the_target_declaration_not_the_first():
    """A `def` before the theorem is context: every lint reads the theorem (never an error, and
    never the def's parameters as hypotheses)."""
    code = (
        "import Mathlib\nopen Real\n\n/-- helper -/\ndef g (n : ℕ) (hn : 0 < 5) : ℕ := n + 1\n\n"
        "/-- the target -/\ntheorem target (x : ℝ) (h : 0 < x) : 0 < x + 1 := by sorry"
    )
    assert parse_statement(code).name == "target"
    outcomes = lint_all(Pair(id="t", informal="If $x > 0$ then $x + 1 > 0$.", formal=code))
    assert all(o.verdict is not Verdict.ERROR for o in outcomes)
    by = {o.check: o for o in outcomes}
    # the def's `hn : 0 < 5` (no variable) would be flagged if the def were linted
    assert by["lint.unused_hypothesis"].verdict is Verdict.PASS
    # a name picks the declaration
    two = "theorem a (x : ℕ) : x = x := rfl\ntheorem b (y : ℕ) : y + 0 = y := by simp"
    assert parse_statement(two).name == "b" and parse_statement(two, "a").name == "a"
    # the name as Lean prints it picks the declaration it names, not another with its last part
    ns = (
        "namespace A\ntheorem t (x : ℕ) : x = x := rfl\nend A\n"
        "namespace B\ntheorem t (y : ℤ) : y = y := rfl\nend B\ntheorem z : True := trivial"
    )
    assert [b.names for b in parse_statement(ns, "A.t").binders] == [["x"]]
    assert [b.names for b in parse_statement(ns, "B.t").binders] == [["y"]]
    quoted = (
        "namespace Foo\ntheorem «a.b» (x : ℕ) : x = x := rfl\nend Foo\ntheorem z : True := trivial"
    )
    assert parse_statement(quoted, "Foo.«a.b»").name == "«a.b»"


@pytest.mark.parametrize(
    "formal",
    [
        "structure Point where\n  x : ℝ\n  y : ℝ",
        "instance : Inhabited ℕ := ⟨0⟩",
        "class Foo (α : Type) where\n  op : α → α",
        "def twice := fun n : ℕ => 2 * n",
    ],
)
def test_lints_skip_what_is_not_a_statement(formal):
    for o in lint_all(Pair(id="t", informal="A point has two coordinates x and y.", formal=formal)):
        if o.check != "lint.formal_echo":
            assert o.verdict is Verdict.SKIP, (o.check, o.evidence)
