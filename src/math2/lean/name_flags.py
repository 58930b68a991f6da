"""The flags of a person's context about names (`math2.lean.flags` gives the others): a
declaration or variable named like a library or core name under every namespace the item opens
or enters (`shadowing`), and a name spelled with letters of another script that reads as one
(`look-alike`). The library's names come from its tables (`math2.lean.library`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from math2.lean.classes import lean_binder_name, library_look_alike, look_alike_binders
from math2.lean.commands import Command
from math2.lean.core_types import UNKNOWN, core_types_of, look_alike, unknown_constant
from math2.lean.lexer import Tok, Token
from math2.lean.library import LibraryTables
from math2.lean.names import plain_variable_name
from math2.lean.rules import DEFINITION_KEYWORDS, normalise_name
from math2.lean.targets import declaration_name
from math2.lean.terms import Violation, _v


def name_flags(
    c: Command,
    i: int,
    full_names: dict[int, str],
    every: Callable[[], set[str]],
    tables: LibraryTables | None,
    offset: int,
    opened: list[str],
    used_later: dict[int, set[str]],
) -> list[Violation]:
    """Declarations and variables named like (or looking like) a library or core name, under
    every namespace the item opens or enters too (`def sqrt` under `open Real` reads as
    `Real.sqrt`; `Foo.Nat.sqrt` inside `namespace Foo` as `Nat.sqrt`)."""
    out: list[Violation] = []
    at = c.tokens[c.keyword_index]
    core = core_types_of(tables)
    full = full_names.get(i)
    declared: list[tuple[str, Token]] = []
    unchecked: dict[int, Violation] = {}  # by offset: variables math2 cannot look up
    if full and c.keyword in DEFINITION_KEYWORDS | {"theorem", "lemma"}:
        t = declaration_name(c)
        declared.append((full, t or at))
        parts = full.split(".")
        written = normalise_name(t.text) if t is not None else full
        why = None
        if tables is not None and (lib := _library_like(full, written, tables, opened)):
            why = f"`{full}` is named like the library's `{lib}`"
            if lib != full and lib != written:
                why += " (under the namespaces the item opens or enters)"
        elif core is not None and parts[-1] in core:
            why = f"`{full}` is named like the core type {parts[-1]}"
        elif len(parts) > 1 and (inside := _library_namespace(parts[0], tables, full_names)):
            why = f"`{full}` is declared inside {inside}"
        if why:
            out.append(_v("shadowing", at, why, offset))
        elif core is None and c.keyword not in ("theorem", "lemma"):
            why = f"`{full}` may be named like a core type ({UNKNOWN}: flagged, fail closed)"
            out.append(_v("unchecked", at, why, offset))
    elif c.keyword in ("variable", "variables"):
        later = used_later.get(i, set())
        for t in c.body:
            if t.kind is Tok.IDENT and t.text not in ("Type", "Sort", "Prop"):
                declared.append((normalise_name(t.text), t))
                name = normalise_name(t.text)
                library = None
                # a variable shadows only where the item uses the name after it
                used = t.text in later and not lean_binder_name(name)
                if tables is not None and len(name) > 1 and used:
                    library = next((f for f in tables.resolve(name, opened) if tables(f)), None)
                if ((core is not None and name in core) or library) and _binds(c, t):
                    why = f"the variable `{name}` is named like the library's `{library or name}`"
                    out.append(_v("shadowing", t, why, offset))
                elif core is None and used and not plain_variable_name(name) and _binds(c, t):
                    why = f"the variable `{name}` may shadow a constant the item uses after it"
                    why += f" ({unknown_constant(tables)}); flagged, fail closed"
                    unchecked[t.offset] = _v("unchecked", t, why, offset)
    for name, t in declared:
        last = name.split(".")[-1]
        like = None if last.isascii() else look_alike(last, every(), core)
        like = like or library_look_alike(name, tables, opened)
        if like:
            why = f"`{name}` is spelled with letters of another script and reads as `{like}`"
            out.append(_v("look-alike", t, why, offset))
            unchecked.pop(t.offset, None)  # the look-alike flag says what the name reads as
    return out + list(unchecked.values())


def _library_namespace(
    space: str, tables: LibraryTables | None, full_names: dict[int, str]
) -> str | None:
    """How a declaration under `space` extends the library's API: `space` is a namespace the
    library declares names under (`Real.sqrt`, `Mine.Real.sqrt` read as Real's), or — without
    tables to ask — one the item does not declare itself (flagged, fail closed)."""
    if tables is not None and not tables.empty:
        return f"the library namespace {space}" if tables.namespace(space) else None
    if space in set(full_names.values()):  # the item's own type's API (`structure Pt`, `Pt.x`)
        return None
    return (
        f"the namespace {space}, which math2 cannot check against the library (its tables are "
        "not loaded: flagged, fail closed)"
    )


def _library_like(
    full: str, written: str, tables: LibraryTables, opened: Sequence[str]
) -> str | None:
    """The library name a declaration reads as: its own full or written name, that name under
    an opened namespace, or what is left of it after a namespace the item opens or enters
    (`Foo.Nat.sqrt` with `Foo` open reads as `Nat.sqrt`)."""
    for name in dict.fromkeys([full, written]):
        for f in tables.resolve(name, opened):
            if tables(f):
                return f
    for ns in opened:
        if full.startswith(ns + ".") and tables(rest := full[len(ns) + 1 :]):
            return rest
    return None


def look_alike_flags(
    c: Command,
    every: Callable[[], set[str]],
    offset: int,
    tables: LibraryTables | None,
    opened: Sequence[str],
) -> list[Violation]:
    """A binder of a target named with look-alike letters of a core or another name."""
    return [
        _v(
            "look-alike",
            n,
            f"`{name}` is spelled with letters of another script and reads as `{like}`",
            offset,
        )
        for n, name, like in look_alike_binders(c, every(), tables, opened)
    ]


def _binds(c: Command, t: Token) -> bool:
    """Whether an identifier of a `variable` command is one it binds (before a `:` in a
    binder), not a name in a type."""
    body = c.body
    k = body.index(t)
    for u in body[k + 1 :]:
        if u.text == ":":
            return True
        if u.kind is not Tok.IDENT:
            return False
    return False
