"""Caps checked before any lexing: an item's size in bytes, its lines and its bracket nesting.
A 10 MB statement or 100,000 nested parentheses is refused in milliseconds, with a clear reason,
instead of costing the lexer (and then Lean) minutes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from math2.lean.lexer import Tok

if TYPE_CHECKING:  # the term rules are imported when a check runs, not with the settings
    from math2.lean.lexer import Token
    from math2.lean.terms import Violation


class Limits(BaseModel):
    """How large an item may be (settings `lean.limits.*`)."""

    max_bytes: int = Field(default=256_000, ge=1)
    max_lines: int = Field(default=5_000, ge=1)
    max_depth: int = Field(default=256, ge=1)
    max_operators: int = Field(default=2_000, ge=1)  # operators on one path of bracket levels


DEFAULT_LIMITS = Limits()
_BRACKETS = re.compile(r"[()\[\]{}⟨⟩⦃⦄]")
_OPENING = frozenset("([{⟨⦃")


def precheck(code: str, limits: Limits = DEFAULT_LIMITS) -> list[Violation]:
    """Violations of the caps, found in one linear pass (nothing is lexed)."""
    from math2.lean.terms import Violation

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


# Tokens that nest without a bracket: prefix and infix operators, binders (`∀ x, ∀ y, …`,
# `fun x => fun y => …`). A run of them at one bracket level nests as deep as it is long
# (`¬¬¬…`, `- - - x`, `a ^ b ^ c ^ …`); Lean's parser and elaborator recurse on it.
_NOT_OPERATORS = frozenset({",", ":", ":=", "(", ")", "[", "]", "{", "}", "⟨", "⟩", "⦃", "⦄", "@["})
_BINDER_WORDS = frozenset({"fun", "let", "have", "show", "if", "then", "else", "match"})


def operator_nesting(toks: list[Token], limits: Limits = DEFAULT_LIMITS) -> list[Violation]:
    """A violation where more than `max_operators` operators of one command stand on one path
    of bracket levels: those at the current level and those before it at every enclosing level
    (bracket depth is capped by `precheck`). An operator nests everything after it at its level,
    brackets included, so `¬¬…(¬¬…(…))` nests as deep as all its `¬` together."""
    from math2.lean.terms import Violation

    if len(toks) <= limits.max_operators:
        return []  # each token counts once at most: so few cannot pass the cap
    counts = [0]
    total = 0  # the operators at every open level: how deep the current token nests
    for t in toks:
        if t.kind is Tok.SYMBOL and t.text in ("(", "[", "{", "⟨", "⦃", "@["):
            counts.append(0)
            continue
        if t.kind is Tok.SYMBOL and t.text in (")", "]", "}", "⟩", "⦄"):
            if len(counts) > 1:
                total -= counts.pop()
            continue
        if (t.kind is Tok.SYMBOL and t.text not in _NOT_OPERATORS) or (
            t.kind is Tok.IDENT and t.text in _BINDER_WORDS
        ):
            counts[-1] += 1
            total += 1
            if total > limits.max_operators:
                detail = f"more than {limits.max_operators:,} operators nest on one path"
                return [Violation(rule="size", line=t.line, column=t.col, detail=detail)]
    return []
