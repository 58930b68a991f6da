"""The pinned library's tables for hygiene, read from the library itself, never from hand lists.

- **names**: whether the library declares a name a user's file can see (the store's active,
  non-private mentions of the `lean4` libraries — Mathlib, and Batteries and Lean core where
  they are imported —, and the declarations of Lean core's shipped sources when a toolchain is
  installed); a `private` declaration is invisible outside its file: no name, namespace, class
  or predicate of the tables;
- **classes**: every `class`, `class inductive` and structure tagged `@[class]`, with whether it
  is Prop-valued (an instance of it is a hypothesis), its parents (`extends`) and which of its
  explicit parameters are `outParam`s (an instance is found by the others);
- **predicates**: the names of definitions whose type ends in `: Prop` (`Nat.Prime`, `Even`): a
  binder of one applied is a hypothesis;
- **scoped**: the namespaces that hold a `scoped instance` (`open PiCountable` switches it on);
- **namespaces**: the namespaces the library declares names under (`Real`, `MeasureTheory`);
- **tokens**: every atom of the library's notation commands (`"ℕ"`, `" + "`, `"π"`), from the
  sources read or the store's `notations` rows; `tokens_complete`: whether every part recorded
  them (not a source imported without notation or atoms); where not, readers fail closed;
- **core types**: `math2.lean.core_types` (Lean core's types, the library's closed notations').

The tables are part of the checker's identity (`digest`): a verdict cached under one table is
never reused under another (nor a store's rows of an older rule: `math2.lean.stored_rule`).
`math2.services.lean` builds them whatever the cache flag says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy import Select, String, cast, func, or_, select

from math2.lean.binders import binder_groups
from math2.lean.brackets import depths
from math2.lean.core_types import NotationFacts, derive
from math2.lean.lexer import LexError, Tok, Token, tokenize
from math2.lean.names import canonical

if TYPE_CHECKING:
    from math2.store import Store

# How the tables are read from declarations: a change of the rule is a change of identity.
TABLES_RULE = "tables-3"  # 2: a private declaration is no library name; 3: nor its fields
CLASS_KINDS = frozenset({"class", "class inductive"})


@dataclass(frozen=True)
class LibraryDecl:
    """A declaration as the tables read it (from a mention of the store or a scanned source)."""

    name: str
    kind: str
    statement: str = ""
    attributes: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    core: bool = False  # read from Lean core's own sources


@dataclass(frozen=True)
class ClassInfo:
    """A class of the library."""

    name: str
    prop: bool  # Prop-valued: an instance is a proof (a binder of it is a hypothesis)
    parents: tuple[str, ...] = ()  # the classes it extends, as written
    out_params: tuple[bool, ...] = ()  # per explicit parameter: an `outParam`


def is_class(d: LibraryDecl) -> bool:
    """`class`, `class inductive`, or a structure tagged `@[class]`."""
    if d.kind in CLASS_KINDS:
        return True
    return d.kind == "structure" and any(
        w.strip() == "class" for a in d.attributes for w in a.split(",")
    )


def _tokens(statement: str) -> list[Token]:
    try:
        return [t for t in tokenize(statement) if t.kind is not Tok.DOC]
    except LexError:
        return []


def result_is_prop(statement: str) -> bool:
    """Whether a declaration's statement ends in `: Prop` or `: … → Prop` (before any
    `extends`)."""
    toks = _tokens(statement)
    level = depths(toks)
    stop = next((k for k, t in enumerate(toks) if t.text == "extends" and not level[k]), len(toks))
    colon = [k for k in range(stop) if toks[k].text == ":" and not level[k]]
    # `: Prop`, or a family of propositions `: α → α → Prop`
    return bool(colon) and stop > colon[-1] + 1 and toks[stop - 1].text == "Prop"


def read_class(d: LibraryDecl) -> ClassInfo:
    """A class's entry from its statement (`(α : outParam (Type u)) (γ : Type v) extends …`)."""
    toks = _tokens(d.statement)
    level = depths(toks)
    ext = next((k for k, t in enumerate(toks) if t.text == "extends" and not level[k]), None)
    parents: list[str] = []
    if ext is not None:
        part: list[str] = []
        for k in range(ext + 1, len(toks)):
            t = toks[k]
            if not level[k] and t.text == ",":
                parents.extend(part[:1])
                part = []
            elif not level[k] and t.text == ":":
                part = []  # `toFoo : Foo α`: the parent is after the colon
            elif t.kind is Tok.IDENT and not level[k]:
                part.append(canonical(t.text))
        parents.extend(part[:1])
    outs: list[bool] = []
    for b in binder_groups(toks[:ext] if ext is not None else toks):
        if b.bracket == "(":
            out = bool(b.type) and b.type[0].text in ("outParam", "semiOutParam")
            outs.extend([out] * max(1, len(b.names)))
    return ClassInfo(
        name=canonical(d.name),
        prop=result_is_prop(d.statement),
        parents=tuple(parents),
        out_params=tuple(outs),
    )


@dataclass
class LibraryTables:
    """The tables (see the module docstring). `known(name)` answers for the store's names;
    `extra` holds the names of declarations read from sources (Lean core's)."""

    classes: dict[str, ClassInfo] = field(default_factory=dict)
    predicates: frozenset[str] = frozenset()
    predicate_parts: frozenset[str] = frozenset()  # their last parts (`p.Prime`)
    scoped: frozenset[str] = frozenset()
    extra: frozenset[str] = frozenset()
    known: Callable[[str], bool] | None = None
    digest: str = "no library tables"
    spaces: frozenset[str] = frozenset()  # namespaces of the names read at once
    known_space: Callable[[str], bool] | None = None  # the store's, one by one
    tokens: frozenset[str] = frozenset()  # the atoms of the library's notation commands
    tokens_complete: bool = False  # every part recorded its notation commands' atoms
    core_types: frozenset[str] = frozenset()  # `math2.lean.core_types`

    def __call__(self, name: str) -> bool:
        """Whether the library declares `name`."""
        if not name:
            return False
        name = canonical(name)
        return name in self.extra or name in self.classes or bool(self.known and self.known(name))

    def namespace(self, name: str) -> bool:
        """Whether the library declares names under the namespace `name` (`Real`, `Nat`)."""
        name = canonical(name)
        return name in self.spaces or bool(self.known_space and self.known_space(name))

    def token(self, atom: str) -> bool | None:
        """Whether Lean or the library already has the notation token `atom` (or a name
        spelled so); None where the tables cannot say (their notation is not complete)."""
        if atom.strip() in self.tokens or self(atom.strip()):
            return True
        return False if self.tokens_complete else None

    @property
    def empty(self) -> bool:
        return not (self.classes or self.extra or self.known)

    def resolve(self, written: str, opened: Sequence[str] = ()) -> list[str]:
        """The full names `written` may stand for under the namespaces `opened` (itself first)."""
        name = canonical(written)
        return [name, *(f"{ns}.{name}" for ns in opened if ns)]

    def class_info(self, written: str, opened: Sequence[str] = ()) -> ClassInfo | None:
        """The class `written` names (under `opened`), or None."""
        for full in self.resolve(written, opened):
            if full in self.classes:
                return self.classes[full]
        return None

    def ancestors(self, info: ClassInfo) -> list[str]:
        """The classes `info` extends, transitively, in order."""
        out: list[str] = []
        todo = list(info.parents)
        while todo:
            p = todo.pop(0)
            if p in out:
                continue
            out.append(p)
            if (q := self.classes.get(p)) is not None:
                todo.extend(q.parents)
        return out

    def predicate(self, written: str, opened: Sequence[str] = ()) -> bool:
        """Whether `written` names a Prop-valued definition or class (`Even`, `p.Prime` read by
        its last part, since `p`'s namespace is its type's)."""
        name = canonical(written)
        last = name.split(".")[-1]
        if any(f in self.predicates for f in self.resolve(name, opened)):
            return True
        info = self.class_info(name, opened)
        return (info is not None and info.prop) or ("." in name and last in self.predicate_parts)

    def scoped_instances_in(self, namespace: str) -> bool:
        """Whether opening `namespace` switches on a scoped instance."""
        return canonical(namespace) in self.scoped


def tables_from(
    decls: Iterable[LibraryDecl],
    known: Callable[[str], bool] | None = None,
    base: str = "",
    notations: Iterable[NotationFacts] | None = None,
    tokens_complete: bool | None = None,
) -> LibraryTables:
    """The tables of some declarations (a source's scan, the store's rows), joined to a name
    lookup `known`; `base` names what `known` reads, for the digest; `notations`: the notation
    commands read with them (None: not read); `tokens_complete`: whether those are all the
    library's (default: whether any were given)."""
    decls = list(decls)
    notes = list(notations or ())
    classes: dict[str, ClassInfo] = {}
    predicates: set[str] = set()
    scoped: set[str] = set()
    names: set[str] = set()
    h = hashlib.sha256(f"{TABLES_RULE}\n{base}\n".encode())
    for d in decls:
        name = canonical(d.name)
        h.update(f"{name}\t{d.kind}\t{d.statement}\t{d.attributes}\t{d.modifiers}\n".encode())
        # a private declaration is invisible outside its file: no name, namespace, class or
        # predicate a user's code can mean (its instance, scoped or not, still acts)
        visible = "private" not in d.modifiers
        if visible:
            names.add(name)
        if visible and is_class(d):
            classes[name] = read_class(d)
        elif (
            visible
            and d.kind in ("def", "abbrev", "inductive", "structure")
            and result_is_prop(d.statement)
        ):
            predicates.add(name)
        scoped_attr = any("scoped" in a and "instance" in a for a in d.attributes)
        if (d.kind == "instance" and "scoped" in d.modifiers) or scoped_attr:
            scoped.add(name.rsplit(".", 1)[0] if "." in name else "")
    for info in classes.values():
        if info.prop:
            predicates.add(info.name)
    atoms = frozenset(a.strip() for n in notes if not n.local for a in n.atoms or () if a.strip())
    core = derive(decls, notes)
    h.update("\n".join(sorted(atoms)).encode())
    h.update(("\ncore:" + "\n".join(sorted(core))).encode())
    return LibraryTables(
        classes=classes,
        predicates=frozenset(predicates),
        predicate_parts=frozenset(p.split(".")[-1] for p in predicates),
        scoped=frozenset(scoped - {""}),
        extra=frozenset(names),
        known=known,
        digest=h.hexdigest()[:16],
        spaces=frozenset(
            ".".join(n.split(".")[:k]) for n in names for k in range(1, n.count(".") + 1)
        ),
        tokens=atoms,
        tokens_complete=notations is not None if tokens_complete is None else tokens_complete,
        core_types=core,
    )


def join(a: LibraryTables, b: LibraryTables) -> LibraryTables:
    """Two tables as one (the store's and Lean core's sources)."""
    if a.empty:
        return b
    if b.empty:
        return a
    return LibraryTables(
        classes={**b.classes, **a.classes},
        predicates=a.predicates | b.predicates,
        predicate_parts=a.predicate_parts | b.predicate_parts,
        scoped=a.scoped | b.scoped,
        extra=a.extra | b.extra,
        known=_either(a.known, b.known),
        digest=hashlib.sha256(f"{a.digest}+{b.digest}".encode()).hexdigest()[:16],
        spaces=a.spaces | b.spaces,
        known_space=_either(a.known_space, b.known_space),
        tokens=a.tokens | b.tokens,
        tokens_complete=a.tokens_complete and b.tokens_complete,
        core_types=a.core_types | b.core_types,
    )


def _either(
    a: Callable[[str], bool] | None, b: Callable[[str], bool] | None
) -> Callable[[str], bool] | None:
    """One lookup that answers yes where either does."""
    if a is None or b is None:
        return a or b
    return lambda n: a(n) or b(n)


class LibraryNames:
    """`names(name) -> bool` over the store: one indexed lookup per name, remembered.

    A name counts where a user's file can see it: an active mention of a `system` library with
    `allow_completion` (Lean's flag, false for a `private` declaration; the Mathlib importer
    clears it for one). The sources are an `IN` list, not a join, so that the index
    `ix_mentions_library_names` answers whatever the statistics say (un-ANALYZEd SQLite too)."""

    def __init__(self, store: Store, system: str = "lean4"):
        self.store = store
        self.system = system
        self.known = lru_cache(maxsize=65_536)(self._lookup)
        self.space = lru_cache(maxsize=4_096)(self._space)

    def __call__(self, name: str) -> bool:
        return bool(name) and self.known(name)

    def query(self, name: str, space: bool = False) -> Select[int]:
        """The lookup of the name `name` (an active, visible mention so named), or with `space`
        of the namespace `name` (the names from `name.` up to `name/`, `/` after `.`)."""
        from math2.store.models import Mention, Source

        named = (
            (Mention.name >= f"{name}.", Mention.name < f"{name}/")
            if space
            else (Mention.name == name,)
        )
        return (
            select(Mention.id)
            .where(Mention.source_id.in_(select(Source.id).where(Source.system == self.system)))
            .where(Mention.status == "active", Mention.allow_completion == True, *named)  # noqa: E712
            .limit(1)
        )

    def _lookup(self, name: str) -> bool:
        with self.store.session() as s:
            return s.scalar(self.query(name)) is not None

    def namespace(self, name: str) -> bool:
        """Whether the store's library declares a visible name under the namespace `name`."""
        return bool(name) and self.space(name)

    def _space(self, name: str) -> bool:
        with self.store.session() as s:
            return s.scalar(self.query(name, space=True)) is not None


def store_tables(store: Store, system: str = "lean4") -> LibraryTables:
    """The tables of the store's active mentions of `system`'s libraries: the classes,
    predicates and scoped instances read at once, the names looked up one by one; the notation
    tokens and core types from its `notations` rows; StaleTables for rows of an older rule."""
    from math2.lean.stored_notation import stored_notations
    from math2.lean.stored_rule import refuse_stale
    from math2.store.models import Mention, Pin, Source

    active = (Source.system == system, Mention.status == "active")
    with store.session() as s:
        refuse_stale(s, TABLES_RULE, system)
        pins = s.execute(
            select(Source.name, Pin.key, func.count(Mention.id))
            .join(Mention, Mention.source_id == Source.id)
            .join(Pin, Pin.id == Mention.pin_id)
            .where(*active)
            .group_by(Source.name, Pin.key)
            .order_by(Source.name, Pin.key)
        ).all()
        rows = s.execute(
            select(Mention.name, Mention.kind, Mention.statement, Mention.extra)
            .join(Source, Source.id == Mention.source_id)
            .where(*active)
            .where(
                or_(
                    Mention.kind.in_(sorted(CLASS_KINDS)),
                    Mention.statement.like("%: Prop%"),
                    cast(Mention.extra, String).like("%scoped%"),
                    cast(Mention.extra, String).like("%class%"),
                )
            )
        ).all()
        notations, complete, constants = stored_notations(s, system)
    decls = list(constants)
    for name, kind, statement, extra in rows:
        extra = extra or {}
        decls.append(
            LibraryDecl(
                name=name,
                kind=kind or "",
                statement=statement or "",
                attributes=tuple(str(a) for a in extra.get("attributes", ())),
                modifiers=tuple(str(m) for m in extra.get("modifiers", ())),
            )
        )
    base = ";".join(f"{n}@{k}:{c}" for n, k, c in pins)
    names = LibraryNames(store, system)
    tables = tables_from(decls, names, base, notations, tokens_complete=complete)
    # the store answers names and namespaces itself, one by one
    tables.extra, tables.spaces, tables.known_space = frozenset(), frozenset(), names.namespace
    return tables
