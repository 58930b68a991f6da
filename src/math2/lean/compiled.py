"""What math2 compiles around a checked body, and what the compiled result must show: the
preamble that turns auto-bound implicits off, and the `#print axioms` answer (only the standard
axioms, and `sorryAx` for a statement, about the expected constant)."""

from __future__ import annotations

import re

from math2.lean.terms import Violation

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
ALLOWED_AXIOMS = STANDARD_AXIOMS | {"sorryAx"}

# The preamble math2 puts in front of every body it compiles.
PREAMBLE = "set_option autoImplicit false\nset_option relaxedAutoImplicit false\n"
PREAMBLE_LINES = PREAMBLE.count("\n")


def prepare(body: str) -> str:
    """The text math2 compiles: the preamble that turns autoImplicit off, then the body."""
    return PREAMBLE + body


_AXIOMS_RE = re.compile(r"depends on axioms:\s*\[(?P<list>[^\]]*)\]", re.S)


def parse_axioms(info: str) -> set[str] | None:
    """The axioms a `#print axioms` answer lists (empty set: none); None if it is not one."""
    if "does not depend on any axioms" in info:
        return set()
    m = _AXIOMS_RE.search(info)
    if not m:
        return None
    return {a.strip() for a in m.group("list").replace("\n", " ").split(",") if a.strip()}


def axiom_violations(axioms: set[str]) -> list[Violation]:
    """Axioms beyond the standard three and `sorryAx`."""
    extra = sorted(axioms - ALLOWED_AXIOMS)
    if not extra:
        return []
    return [Violation(rule="axioms", line=None, detail=f"depends on {', '.join(extra)}")]
