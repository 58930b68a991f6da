"""What math2 compiles around a checked body, and what the compiled result must show: the
preamble that turns auto-bound implicits off, and the `#print axioms` answer (only the standard
axioms, and `sorryAx` for a statement, about the expected constant)."""

from __future__ import annotations

import re

from math2.lean.diagnostics import Diagnostic
from math2.lean.names import NAME
from math2.lean.names import parts as name_parts
from math2.lean.protocol import Pos
from math2.lean.rules import FORBIDDEN_ROOTS
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


def show_constant(name: str) -> bool:
    """Whether `show_types` may ask for a name: one constant (components written bare or in
    «…», never holding a quote, a newline or `»`), under no root that reaches IO or Lean."""
    if not name or any(c in name for c in '\n\r"`$@#;') or name.count("«") != name.count("»"):
        return False
    parts = name_parts(name)
    if any(not p or "»" in p or "«" in p for p in parts):
        return False
    return not FORBIDDEN_ROOTS.match(".".join(p for p in parts if p != "_root_"))


CHECK_ANSWER = re.compile(r"^@?(?P<name>" + NAME + r") :\s(?P<type>.*)$", re.S)


def bad_names(names: list[str]) -> str:
    return f"not a constant name for `#check`: {', '.join(repr(n[:80]) for n in names)}"


def axiom_detail(subject: str, extra: list[str], target: bool) -> str:
    who = "" if target else f"the context declaration {subject} "
    return f"{who}depends on {', '.join(extra)}"


def not_declared(name: str, subject: str | None) -> Violation:
    """The compiled environment did not answer for the expected theorem."""
    return Violation(
        rule="target",
        line=None,
        detail=f"the compiled environment answers for {subject!r}, not the expected {name!r}",
    )


def shift(d: Diagnostic, offset: int) -> Diagnostic:
    if not offset or d.pos is None:
        return d
    pos = Pos(line=d.pos.line - offset, column=d.pos.column)
    end = Pos(line=d.end_pos.line - offset, column=d.end_pos.column) if d.end_pos else None
    return d.model_copy(update={"pos": pos, "end_pos": end})
