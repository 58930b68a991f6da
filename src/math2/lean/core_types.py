"""Which types are *core types*, read from the library's tables, never from a hand list.

An instance on a core type in a person's context changes what every statement about it means
(flagged "core instance"); a definition or variable named like one shadows it. A core type is

- a type Lean core's own sources declare (an `inductive` or `structure` of the toolchain's
  `Init`/`Std` that is not Prop-valued: `Nat`, `Int`, `Bool`, `Fin`, `List`), or
- a type a *closed* notation of the library stands for: a `notation` whose left-hand side is one
  atom and nothing else, unfolding to one constant that takes no arguments (`notation "ℝ" =>
  Real`, `notation "ℕ" => Nat`, `notation "ℝ≥0" => NNReal`) — the atom and the constant both.

`Polynomial` is neither: it takes an argument and its notation `R[X]` has an operand; `π`
(`notation "π" => Real.pi`) unfolds to a term of type ℝ, not to a type. A constant the tables do
not declare (Lean core's `Nat` where only the store's Mathlib is loaded) counts as a type: the
reader errs towards the flag. Without tables, or where their notation was not recorded (a store
imported before migration 0016), there is no answer (`core_types_of` gives None) and each reader
fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Protocol

from math2.lean.brackets import depths
from math2.lean.lexer import LexError, Tok, tokenize

if TYPE_CHECKING:
    from math2.lean.library import LibraryDecl, LibraryTables

TYPE_KINDS = frozenset({"inductive", "structure"})
# What a closed notation may unfold to and still stand for a type (with no argument).
CLOSED_TYPE_KINDS = TYPE_KINDS | {"def", "abbrev"}
NOTATION_KINDS = frozenset({"notation", "notation3"})


class NotationFacts(Protocol):
    """A notation command as the tables read it: a scanned `lean_notation.Notation` or the row
    its import stored (`store.NotationRecord`)."""

    @property
    def kind(self) -> str | None: ...
    @property
    def atoms(self) -> Sequence[str] | None: ...
    @property
    def constants(self) -> Sequence[str]: ...
    @property
    def namespace(self) -> str: ...
    @property
    def leading_atom(self) -> bool | None: ...
    @property
    def local(self) -> bool: ...


def closed_notation(n: NotationFacts) -> tuple[str, str] | None:
    """(atom, constant as written) of a closed notation (`notation "ℝ" => Real`), else None."""
    atoms = list(n.atoms or ())
    if n.local or n.kind not in NOTATION_KINDS or not n.leading_atom:
        return None
    if len(atoms) != 1 or len(n.constants) != 1 or not atoms[0].strip():
        return None
    return atoms[0].strip(), n.constants[0]


def takes_no_argument(statement: str) -> bool:
    """Whether a declaration's statement (what stands between its name and `:=`) has no binder
    and, where it gives a type, a universe (`''`, `: Type`, `: Type u`, `: Sort*`)."""
    try:
        toks = [t for t in tokenize(statement) if t.kind is not Tok.DOC]
    except LexError:
        return False
    if not toks:
        return True
    level = depths(toks)
    arrow = any(t.text in ("→", "->", "∀") and not level[k] for k, t in enumerate(toks))
    if toks[0].text != ":" or arrow:
        return False
    return len(toks) > 1 and toks[1].text in ("Type", "Sort", "Type*", "Sort*")


def is_type_decl(d: LibraryDecl) -> bool:
    """A type declaration (an inductive or structure that is not Prop-valued)."""
    from math2.lean.library import result_is_prop

    return d.kind in TYPE_KINDS and not result_is_prop(d.statement)


def derive(decls: Iterable[LibraryDecl], notations: Iterable[NotationFacts]) -> frozenset[str]:
    """The core types (the module docstring) of declarations and notation commands."""
    from math2.lean.names import canonical, in_namespace

    by_name: dict[str, LibraryDecl] = {}
    out: set[str] = set()
    for d in decls:
        name = canonical(d.name)
        by_name[name] = d
        if d.core and is_type_decl(d):
            out.add(name)
    for n in notations:
        if (closed := closed_notation(n)) is None:
            continue
        atom, written = closed
        full = (c for c in in_namespace(written, n.namespace) if c in by_name)
        constant = next(full, canonical(written))
        found = by_name.get(constant)
        if found is None or (
            found.kind in CLOSED_TYPE_KINDS and takes_no_argument(found.statement)
        ):
            out |= {atom, constant}
    return frozenset(out)


# Said where a reader cannot tell whether a name is a core type (and flags it, fail closed).
UNKNOWN = "math2 cannot tell whether it is a core type: the library tables are not loaded"


def unknown_constant(tables: LibraryTables | None) -> str:
    """Why math2 cannot tell whether a name is a library constant or a core type (where
    `core_types_of(tables)` is None; said with the name, which is refused or flagged)."""
    if tables is None or tables.empty:
        return (
            "math2 cannot tell whether it is a library constant: the library tables are not loaded"
        )
    return (
        "math2 cannot tell whether it is a core type: the library's notations were not recorded "
        "in its tables"
    )


def core_among(names: Iterable[str], core: frozenset[str] | None) -> list[str]:
    """The core types among `names`, sorted; without tables (`core` None) all of them, each
    with the reason it is listed (fail closed)."""
    if core is None:
        return [f"{n} ({UNKNOWN})" for n in sorted(set(names))]
    return sorted(set(names) & core)


def look_alike(name: str, known: AbstractSet[str], core: frozenset[str] | None) -> str | None:
    """The name of `known` or a core type that `name` only looks like; without core types to
    compare with (`core` None), any name of mixed scripts (`Νat`), fail closed."""
    from math2.lean.names import look_alike_of, mixed_script

    like = look_alike_of(name, (core or frozenset()) | known)
    return like or (mixed_script(name) if core is None else None)


def core_types_of(tables: LibraryTables | None) -> frozenset[str] | None:
    """The core types of `tables`; None where there are no tables to read them from, or their
    notation was not recorded (`tokens_complete`: `ℝ` → `Real` cannot be read then)."""
    if tables is None or tables.empty or not tables.tokens_complete:
        return None
    return tables.core_types
