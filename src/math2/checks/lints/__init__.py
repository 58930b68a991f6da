"""Deterministic lints on a pair: no model, no Lean; a lexical reading of the statement.

- `lint.unused_hypothesis`: a hypothesis that shares no variable with the goal, even through
  other hypotheses (it cannot bear on what is proved), or one that mentions no variable at all.
- `lint.restated_conclusion`: a hypothesis that is the goal (or one conjunct of it is the goal).
- `lint.nat_arith`: truncated ℕ subtraction or floor ℕ division between natural-number
  variables, where the text speaks of reals, rationals, fractions, negatives or integers.
- `lint.trivial_goal`: the goal is `True`, `a = a` (or `a ↔ a`, `a ≤ a`), or the hypotheses
  contradict each other syntactically (`False`, `a < a`, `a ≠ a`, `P` and `¬P`, `a < b` and
  `b ≤ a`, `a = b` and `a ≠ b`, a false comparison of numerals).
- `lint.formal_echo`: the informal text is Lean (a code block, or the statement copied).
- `lint.no_shared_objects`: the formal statement mentions none of the text's objects (math
  variables, numbers, or content words matched against the parts of Lean names).

The traps people make (`lints/traps.py`): `lint.missing_positivity`, `lint.inverse_notation`,
`lint.multiplicative_wrapper`, `lint.top_smoothness`, `lint.subset_direction`,
`lint.unique_existence`, `lint.unmatched_variable`.

A lint fails with its evidence, passes, skips what is not a statement, or is `error` when the
formal statement cannot be read. A lint whose precision on the labelled dev set
(`precision.json`) is under 90 % only warns: its `fail` carries `warn` and fails no pair.
"""

from __future__ import annotations

from math2.checks.base import Outcome, Pair, make_check
from math2.checks.lints import (  # noqa: F401  (registers the lints)
    arith,
    echo,
    hypotheses,
    objects,
    traps,
)
from math2.checks.lints.common import Lint

__all__ = ["LINTS", "Lint", "lint_all"]

LINTS = [
    "lint.unused_hypothesis",
    "lint.restated_conclusion",
    "lint.nat_arith",
    "lint.trivial_goal",
    "lint.no_shared_objects",
    "lint.formal_echo",
    # the traps (lints/traps.py): warn until their precision on the dev set reaches the bar
    "lint.missing_positivity",
    "lint.inverse_notation",
    "lint.multiplicative_wrapper",
    "lint.top_smoothness",
    "lint.subset_direction",
    "lint.unique_existence",
    "lint.unmatched_variable",
]


def lint_all(pair: Pair) -> list[Outcome]:
    """Every lint on one pair (synchronous: lints need no context)."""
    out = []
    for name in LINTS:
        lint = make_check(name)
        assert isinstance(lint, Lint)
        out.append(lint.check(pair))
    return out
