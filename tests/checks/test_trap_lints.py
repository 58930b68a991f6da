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
