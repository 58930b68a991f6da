"""What a definition says, read from the source scan's code view (issue 33 §1).

The source scan records a declaration's statement up to its top-level `:=`, `|` or `where`;
for a definition that is only its signature (`def Function.Periodic (f : α → β) (c : α) :
Prop`), so a query that states what it says (`∀ x, f (x + c) = f x`) cannot meet it. These
functions read the rest from the lexer's code view (`math2.lean.syntax.mask`: comments and
strings blanked, offsets kept), as *clauses* the search index reads as words and formula
shapes — never node text:

- a `def`/`abbrev`'s value after `:=` (or its `| pattern => value` alternatives), up to the
  declaration's end, a top-level `where`, `termination_by` or `decreasing_by`; nothing when
  the value is a tactic block (`:= by …`);
- an `inductive`'s constructors, one clause each (`succ (n : ℕ) : ℕ`);
- a `structure`'s or `class`'s fields are declarations of their own
  (`lean_fields.structure_fields`);
  the scan gives their owner one clause per field (`name : type`) with `field_clauses`.

A clause is cut at `MAX_CLAUSE` characters and a declaration keeps at most `MAX_CLAUSES`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_CLAUSE = 400
MAX_CLAUSES = 24
_WS = re.compile(r"\s+")
# What ends a value: a bracket (counted), a top-level `where`/`termination_by`/
# `decreasing_by`/`deriving`, or a line that starts a new command.
_STOP = re.compile(r"[()\[\]{}⟨⟩⦃⦄]|\b(?:where|termination_by|decreasing_by|deriving)\b|\n(?=\S)")
_OPENING, _CLOSING = "([{⟨⦃", ")]}⟩⦄"
_BAR = re.compile(r"[()\[\]{}⟨⟩⦃⦄]|(?:^|(?<=\s))\|(?=\s)")


def stops(
    pattern: re.Pattern[str], code: str, start: int = 0
) -> Iterator[tuple[re.Match[str], int]]:
    """The matches of `pattern` (which must also match every bracket) from `start` that are not
    brackets, each with its bracket depth."""
    depth = 0
    for m in pattern.finditer(code, start):
        tok = m.group(0)
        if tok in _OPENING:
            depth += 1
        elif tok in _CLOSING:
            depth = max(0, depth - 1)
        else:
            yield m, depth


def _end(code: str, start: int, doc_starts: list[int]) -> int:
    """Where the text from `start` stops being this declaration's value (see `_STOP`)."""
    stop = next(
        (m.start() for m, depth in stops(_STOP, code, start) if m.group(0)[0] == "\n" or not depth),
        len(code),
    )
    for d in doc_starts:  # a doc comment (blank in the code view) starts the next declaration
        if start <= d < stop:
            return d
    return stop


def _clip(text: str) -> str:
    return _WS.sub(" ", text).strip()[:MAX_CLAUSE]


def _split_bars(text: str) -> list[str]:
    """`| a | b (x : α) : T` → `["a", "b (x : α) : T"]`: split at top-level `|`."""
    parts, last = [], 0
    for m, depth in stops(_BAR, text):
        if depth == 0:
            parts.append(text[last : m.start()])
            last = m.end()
    parts.append(text[last:])
    return [c for c in (_clip(p) for p in parts) if c]


def value_clauses(code: str, at: int, doc_starts: list[int]) -> list[str]:
    """A definition's value, whose statement ended at `at` (`:=` or `\\n |`): one clause, or
    one per `| pattern => value` alternative; none for a tactic block or a `where` body."""
    rest = code[at:]
    if rest.startswith(":="):
        start = at + 2
        value = code[start : _end(code, start, doc_starts)]
        if not value.strip() or re.match(r"\s*by\b", value):
            return []
        return [_clip(value)]
    if rest.lstrip().startswith("|"):
        start = at + len(rest) - len(rest.lstrip())
        return _split_bars(code[start : _end(code, start, doc_starts)])[:MAX_CLAUSES]
    return []


def constructor_clauses(code: str, at: int, doc_starts: list[int]) -> list[str]:
    """An inductive type's constructors, whose statement ended at `at` (`where` or `\\n |`):
    `name binders : type` each."""
    start = at + 5 if code.startswith("where", at) else at
    return _split_bars(code[start : _end(code, start, doc_starts)])[:MAX_CLAUSES]


def field_clause(local: str, statement: str) -> str:
    """A structure field as its owner's clause: `x : ℕ`, `le_refl (a : α) : a ≤ a`."""
    return _clip(f"{local} {statement}")
