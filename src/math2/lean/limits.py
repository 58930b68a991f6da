"""Caps checked before any lexing: an item's size in bytes, its lines and its bracket nesting.
A 10 MB statement or 100,000 nested parentheses is refused in milliseconds, with a clear reason,
instead of costing the lexer (and then Lean) minutes."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from math2.lean.terms import Violation


class Limits(BaseModel):
    """How large an item may be (settings `lean.limits.*`)."""

    max_bytes: int = Field(default=256_000, ge=1)
    max_lines: int = Field(default=5_000, ge=1)
    max_depth: int = Field(default=256, ge=1)


DEFAULT_LIMITS = Limits()
_BRACKETS = re.compile(r"[()\[\]{}⟨⟩⦃⦄]")
_OPENING = frozenset("([{⟨⦃")


def precheck(code: str, limits: Limits = DEFAULT_LIMITS) -> list[Violation]:
    """Violations of the caps, found in one linear pass (nothing is lexed)."""
    for n, cap, unit in (
        (len(code.encode("utf-8", "surrogatepass")), limits.max_bytes, "bytes"),
        (code.count("\n") + 1, limits.max_lines, "lines"),
    ):
        if n > cap:
            detail = f"the item has {n:,} {unit}; at most {cap:,} are allowed"
            return [Violation(rule="size", line=None, detail=detail)]
    depth = 0
    for m in _BRACKETS.finditer(code):
        if m.group() in _OPENING:
            depth += 1
            if depth > limits.max_depth:
                line = code.count("\n", 0, m.start()) + 1
                col = m.start() - (code.rfind("\n", 0, m.start()) + 1)
                return [
                    Violation(
                        rule="size",
                        line=line,
                        column=col,
                        detail=f"brackets nest deeper than {limits.max_depth}",
                    )
                ]
        elif depth:
            depth -= 1
    return []
