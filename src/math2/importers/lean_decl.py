"""What the Lean source scanner (`lean_source.py`) finds in a file: its declarations and what
its module says, and where a statement ends."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from math2.importers.lean_bodies import stops
from math2.importers.lean_notation import Notation
from math2.importers.to_additive import ToAdditive

STMT_STOP = re.compile(r"[()\[\]{}⟨⟩⦃⦄]|:=|\bwhere\b|\n[ \t]*\||\n(?=\S)")
WS = re.compile(r"\s+")


@dataclass(slots=True)
class Declaration:
    """One declaration found in a source file."""

    name: str | None  # full name (generated for anonymous instances); None for `example`
    kind: str
    module: str
    line: int
    statement: str
    docstring: str | None
    attributes: list[str]
    modifiers: list[str]
    deprecated_since: str | None = None
    successor: str | None = None  # from `@[deprecated new]` or `alias old := new`
    stacks: list[str] = field(default_factory=list)
    generated: bool = False  # a name the scanner derived the way Lean does (anonymous instance)
    additive: ToAdditive | None = None  # what its `@[to_additive]` attribute says
    twin_of: str | None = None  # for a generated additive twin: the declaration it comes from
    alias_direction: str | None = None  # `alias ⟨a, b⟩ := foo_iff`: `mp` for a, `mpr` for b
    # What a definition says (`lean_bodies`): a def's value, a structure's fields, an
    # inductive's constructors; read by the search index only, never node text.
    body: list[str] = field(default_factory=list)

    @property
    def private(self) -> bool:
        """Written `private`: invisible outside its file (Lean mangles its name)."""
        return "private" in self.modifiers

    @property
    def statement_hash(self) -> str:
        """sha256 of the statement text with whitespace collapsed (a source-level type hash)."""
        return hashlib.sha256(WS.sub(" ", self.statement).strip().encode()).hexdigest()[:32]


@dataclass
class SourceFile:
    """What one file declares, and the main results its module docs name."""

    module: str
    path: str
    declarations: list[Declaration]
    main_results: list[str]
    # `attribute [to_additive …] A B`: (candidate full names of each target, what it says)
    additive_attributes: list[tuple[list[str], ToAdditive]] = field(default_factory=list)
    notations: list[Notation] = field(default_factory=list)  # what its notation commands say
    opens: list[str] = field(default_factory=list)  # namespaces its `open` commands name


def statement_end(code: str, start: int) -> int:
    """Offset of the top-level `:=`, `|`, `where`, or a line that starts a new command."""
    return next((m.start() for m, depth in stops(STMT_STOP, code, start) if not depth), len(code))
