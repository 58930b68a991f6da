"""The trap lints: each flags its trap and leaves the faithful version alone."""

from __future__ import annotations

import pytest

from math2.checks import Pair, make_check
from math2.store.work import Verdict

CASES = [
    (
        "lint.missing_positivity",
        "For every positive real $x$, $x + 1 > 1$.",
        "theorem t (x : ℝ) : x + 1 > 1 := by sorry",
        "theorem t (x : ℝ) (hx : 0 < x) : x + 1 > 1 := by sorry",
    ),
    (
        "lint.missing_positivity",
        "Every non-empty finite set $S$ of naturals has a least element.",
        "theorem t (S : Finset ℕ) : ∃ m ∈ S, ∀ k ∈ S, m ≤ k := by sorry",
        "theorem t (S : Finset ℕ) (h : S.Nonempty) : ∃ m ∈ S, ∀ k ∈ S, m ≤ k := by sorry",
    ),
    (
        "lint.inverse_notation",
        "If $f$ is a bijection then the inverse of $f$ is a bijection.",
        "theorem t (f : ℝ → ℝ) (hf : Function.Bijective f) : Function.Bijective f⁻¹ := by sorry",
        "theorem t (f : ℝ ≃ ℝ) : Function.Bijective f.symm := by sorry",
    ),
    (
        "lint.multiplicative_wrapper",
        "The integers form a group under addition.",
        "theorem t : Nonempty (Group (Multiplicative ℤ)) := by sorry",
        "theorem t : Nonempty (AddGroup ℤ) := by sorry",
    ),
    (
        "lint.top_smoothness",
        "The exponential function is smooth.",
        "theorem t : ContDiff ℝ ⊤ Real.exp := by sorry",
        "theorem t : ContDiff ℝ ∞ Real.exp := by sorry",
    ),
    (
        "lint.subset_direction",
        "If $A$ is a subset of $B$ then the union of $A$ and $B$ is $B$.",
        "theorem t (A B : Set ℕ) (h : B ⊆ A) : A ∪ B = B := by sorry",
        "theorem t (A B : Set ℕ) (h : A ⊆ B) : A ∪ B = B := by sorry",
    ),
    (
        "lint.unique_existence",
        "There is a unique real $x$ with $x + 1 = 2$.",
        "theorem t : ∃ x : ℝ, x + 1 = 2 := by sorry",
        "theorem t : ∃! x : ℝ, x + 1 = 2 := by sorry",
    ),
    (
        "lint.unmatched_variable",
        "For reals $x$ and $y$, $x^2 + y^2 \\ge 2xy$.",
        "theorem t (x : ℝ) : x ^ 2 + x ^ 2 ≥ 2 * x * x := by sorry",
        "theorem t (x y : ℝ) : x ^ 2 + y ^ 2 ≥ 2 * x * y := by sorry",
    ),
]


@pytest.mark.parametrize(("lint", "informal", "trap", "fixed"), CASES)
def test_trap_flagged_and_fix_passes(lint, informal, trap, fixed):
    check = make_check(lint)
    bad = check.check(Pair(id="b", informal=informal, formal=trap))
    good = check.check(Pair(id="g", informal=informal, formal=fixed))
    assert bad.verdict is Verdict.FAIL and bad.evidence["findings"], bad
    assert good.verdict is Verdict.PASS, good.evidence


def test_unique_existence_both_ways():
    check = make_check("lint.unique_existence")
    out = check.check(
        Pair(id="x", informal="Some real $x$ has $x > 0$.", formal="theorem t : ∃! x : ℝ, x > 0")
    )
    assert out.verdict is Verdict.FAIL and "never says unique" in out.evidence["findings"][0]


# Each of these was a false flag (issue 34 §5): the lint read what the notation does not say.
FAITHFUL = [
    # `f ⁻¹' s` is the preimage of a set, not the pointwise reciprocal of `f`
    (
        "lint.inverse_notation",
        "The inverse image of an open set $s$ under a continuous $f$ is open.",
        "theorem t (f : ℝ → ℝ) (hf : Continuous f) (s : Set ℝ) (hs : IsOpen s) : "
        "IsOpen (f ⁻¹' s) := by sorry",
    ),
    (
        "lint.inverse_notation",
        "The preimage under $f$ of the inverse image of $s$ is the inverse image of $s$.",
        "theorem t (f : ℝ → ℝ) (s : Set ℝ) : f⁻¹' (f⁻¹' s) ⊆ f⁻¹' (f⁻¹' s) := by sorry",
    ),
    # `\mathbb{R}` (Z, Q, C, N) is a number system, not a variable
    *(
        (
            "lint.unmatched_variable",
            f"For every $x \\in {ns}$, $x = x$.",
            f"theorem t (x : {lean}) : x = x := by sorry",
        )
        for ns, lean in [
            ("\\mathbb{R}", "ℝ"),
            ("\\mathbb{Z}", "ℤ"),
            ("\\mathbb{Q}", "ℚ"),
            ("\\mathbb{C}", "ℂ"),
            ("\\mathbb{N}", "ℕ"),
            ("\\mathbb R", "ℝ"),
            ("\\Bbb Z", "ℤ"),
        ]
    ),
    (
        "lint.unmatched_variable",
        "For $f: \\mathbb{R}^n \\to \\mathbb{R}$ with $\\operatorname{Lip}(f) \\le 1$, $f = f$.",
        "theorem t (n : ℕ) (f : (Fin n → ℝ) → ℝ) (h : LipschitzWith 1 f) : f = f := by sorry",
    ),
    # `ℕ+` is the positive naturals
    (
        "lint.missing_positivity",
        "For every positive integer $n$, $n \\ge 1$.",
        "theorem t (n : ℕ+) : (n : ℕ) ≥ 1 := by sorry",
    ),
    (
        "lint.missing_positivity",
        "For every positive integer $n$, $n \\ge 1$.",
        "theorem t : ∀ n : ℕ+, (n : ℕ) ≥ 1 := by sorry",
    ),
]


@pytest.mark.parametrize(("lint", "informal", "formal"), FAITHFUL)
def test_notation_is_not_a_finding(lint, informal, formal):
    out = make_check(lint).check(Pair(id="g", informal=informal, formal=formal))
    assert out.verdict is Verdict.PASS, out.evidence


@pytest.mark.parametrize(
    ("lint", "informal", "formal", "finding"),
    [
        # the reciprocal beside a preimage is still found
        (
            "lint.inverse_notation",
            "The inverse function of $f$ maps the inverse image of $s$ into $s$.",
            "theorem t (f : ℝ → ℝ) (s : Set ℝ) : f⁻¹ '' (f ⁻¹' s) ⊆ s := by sorry",
            "`f⁻¹`",
        ),
        # a letter beside a number system is still a variable
        (
            "lint.unmatched_variable",
            "For $x, y \\in \\mathbb{R}$, $x + y = y + x$.",
            "theorem t (x : ℝ) : x + x = x + x := by sorry",
            "`y`",
        ),
        # `ℕ +` apart, or ℕ alone, says nothing of positivity
        (
            "lint.missing_positivity",
            "For every positive integer $n$, $n \\ge 1$.",
            "theorem t (n : ℕ) : n ≥ 1 := by sorry",
            "positive",
        ),
    ],
)
def test_findings_beside_the_notation(lint, informal, formal, finding):
    out = make_check(lint).check(Pair(id="b", informal=informal, formal=formal))
    assert out.verdict is Verdict.FAIL, out.evidence
    assert any(finding in f for f in out.evidence["findings"]), out.evidence
