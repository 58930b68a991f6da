"""Deterministic lints on a pair: no model, no Lean; a lexical reading of the statement.

- `lint.unused_hypothesis`: a hypothesis that shares no variable with the goal, even through
  other hypotheses (it cannot bear on what is proved), or one that mentions no variable at all.
- `lint.restated_conclusion`: a hypothesis that is the goal (or one conjunct of it is the goal).
- `lint.nat_arith`: truncated ℕ subtraction or floor ℕ division between natural-number
  variables, where the text speaks of reals, rationals, fractions, negatives or integers.
- `lint.trivial_goal`: the goal is `True`, `a = a` (or `a ↔ a`, `a ≤ a`), or the hypotheses
  contradict each other syntactically (`False`, `a < a`, `a ≠ a`, `P` and `¬P`, `a < b` and
  `b ≤ a`, `a = b` and `a ≠ b`, a false comparison of numerals).
- `lint.no_shared_objects`: the formal statement mentions none of the text's objects (math
  variables, numbers, or content words matched against the parts of Lean names).

A lint fails with its evidence, passes, or is `error` when the formal statement cannot be read.
"""

from __future__ import annotations

from math2.checks.base import Outcome, Pair, make_check
from math2.checks.lints import arith, hypotheses, objects  # noqa: F401  (registers the lints)
from math2.checks.lints.common import Lint

__all__ = ["LINTS", "Lint", "lint_all"]

LINTS = [
    "lint.unused_hypothesis",
    "lint.restated_conclusion",
    "lint.nat_arith",
    "lint.trivial_goal",
    "lint.no_shared_objects",
]


def lint_all(pair: Pair) -> list[Outcome]:
    """Every lint on one pair (synchronous: lints need no context)."""
    out = []
    for name in LINTS:
        lint = make_check(name)
        assert isinstance(lint, Lint)
        out.append(lint.check(pair))
    return out
