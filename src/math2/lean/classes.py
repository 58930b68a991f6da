"""What a binder, a `variable` or an `open` does with the library's classes, read from the
tables of `math2.lean.library` (never from a hand list): which binder is an instance and of
which class, which is a hypothesis, which instance a closed library type would get, which
`open` switches on scoped instances, which name only looks like a library name. Read by both
trust levels (`math2.lean.trust` refuses, `math2.lean.flags` flags)."""

from __future__ import annotations

from collections.abc import Sequence

from math2.lean.binders import Binder, binder_groups
from math2.lean.brackets import depths, matching, proof_start
from math2.lean.commands import Command
from math2.lean.core_types import core_types_of, look_alike
from math2.lean.lexer import Tok, Token
from math2.lean.library import ClassInfo, LibraryTables
from math2.lean.names import canonical, latin_skeleton, parts
from math2.lean.rules import normalise_name

# Lean's syntax for propositions: a binder's type with one of these is a hypothesis. Names
# (`Nat.Prime`, `Fact`, `False`) are read from the library's tables (`LibraryTables.predicate`).
PROP_TOKENS = frozenset(
    {"=", "≠", "<", ">", "≤", "≥", "∣", "∀", "∃", "∃!", "↔", "∧", "∨", "¬", "∈", "∉",
     "⊆", "⊂", "⊇", "⊃", "≡"}
)  # fmt: skip


def scoped_opens(
    c: Command, tables: LibraryTables | None, enclosing: Sequence[str] = ()
) -> list[tuple[Token, str, str]]:
    """The namespaces an `open` or `namespace` switches scoped instances on in (the library's
    scan says which hold a `scoped instance`): (where, the namespace, why). `enclosing`: the
    namespace components already entered before `c` — `namespace B` inside `namespace A` enters
    A.B, and `open B` there opens A.B where the library has it, as Lean resolves both."""
    if tables is None or not tables.scoped:
        return []
    out = []
    words = [t for t in c.body if t.kind is Tok.IDENT]
    if c.keyword == "namespace":  # `namespace A.B` enters A's scope and A.B's
        words = words[:1]
    outer = [p for e in enclosing for p in parts(canonical(e))]
    for t in words:
        name = canonical(t.text)
        if c.keyword == "namespace":  # every namespace entered here, with the enclosing ones
            full = [*outer, *parts(name)]
            spaces = [".".join(full[:k]) for k in range(len(outer) + 1, len(full) + 1)]
        else:  # `open B` inside A reads A.B first, then B
            spaces = [".".join([*outer[:k], name]) for k in range(len(outer), -1, -1)]
        for ns in spaces:
            if tables.scoped_instances_in(ns):
                verb = "entering" if c.keyword == "namespace" else "opening"
                why = (
                    f"the library's namespace `{ns}` holds scoped instances: {verb} it changes "
                    "instance resolution for the statement"
                )
                out.append((t, ns, why))
    return out


def class_of(
    kind: Sequence[Token], tables: LibraryTables | None, opened: Sequence[str] = ()
) -> ClassInfo | None:
    """The library class a type's head names (`LT` of `LT ℕ`), read from the class table; None
    for anything else (a structure, a type of objects, a variable) or without a table."""
    if tables is None:
        return None
    head = next((t for t in kind if t.kind is Tok.IDENT), None)
    if head is None:
        return None
    return tables.class_info(normalise_name(head.text).removeprefix("_root_."), opened)


def hypothesis_token(
    body: Sequence[Token], tables: LibraryTables | None, opened: Sequence[str] = ()
) -> Token | None:
    """The token that makes a `variable`'s binder a hypothesis: Lean's syntax of propositions
    (`=`, `<`, `∀`, …) or a name the library's tables give as Prop-valued (`Nat.Prime`,
    `Even`, `False`) — a class at the head of a `[…]` binder is judged as a class instead."""
    level = depths(body)
    bracket = ""  # the top-level binder bracket the token is in
    for k, t in enumerate(body):
        if level[k] == 0 and t.text in ("[", "(", "{", "⦃"):
            bracket = t.text
            continue
        if t.text in PROP_TOKENS:
            return t
        if t.kind is not Tok.IDENT or tables is None:
            continue
        name = normalise_name(t.text)
        if bracket == "[" and body[k - 1].text == "[" and tables.class_info(name, opened):
            continue
        if tables.predicate(name, opened):
            return t
    return None


def look_alike_binders(
    c: Command,
    known: set[str],
    tables: LibraryTables | None = None,
    opened: Sequence[str] = (),
) -> list[tuple[Token, str, str]]:
    """The target's binders named with look-alike letters of a core name, of another of
    `known` (`(Νat : Type)`) or of a library name under the namespaces `opened` (`lοg` with a
    Greek omicron under `open Real`): (the name's token, the name, what it looks like). Both
    levels read them so (a model's block is refused, a person's context flagged)."""
    out = []
    stop = proof_start(c.body)
    for b in binder_groups(c.body[1:stop]):
        for n in b.names:
            name = normalise_name(n.text)
            like = look_alike(name, known - {name}, core_types_of(tables))
            like = like or library_look_alike(name, tables, opened)
            if like is not None:
                out.append((n, name, like))
    return out


def library_look_alike(
    name: str, tables: LibraryTables | None, opened: Sequence[str] = ()
) -> str | None:
    """The library name (under `opened`) that `name` only looks like, or None."""
    if tables is None or len(name) < 2:
        return None
    skeleton = latin_skeleton(name)
    if skeleton == name:
        return None
    return next((f for f in tables.resolve(skeleton, opened) if tables(f)), None)


def closed_instance(b: Binder, bound: set[str], info: ClassInfo | None = None) -> str | None:
    """Why an instance binder is refused: none of the class's arguments that Lean finds an
    instance by (those that are not `outParam`s, from the class table) is a variable bound in
    the block — `[Fintype ℕ]`, `[LT (Fin n)]`, `[Membership β (Set ℕ)]` (β is an outParam:
    the binder gives `∈` on the library's `Set ℕ`)."""
    args = b.arguments()
    outs = info.out_params if info is not None else ()
    keyed = [a for k, a in enumerate(args) if not (k < len(outs) and outs[k])]
    if any(len(a) == 1 and normalise_name(a[0].text) in bound for a in keyed):
        return None
    shown = " ".join(t.text for t in b.type)[:60]
    on = ", ".join(" ".join(t.text for t in a) for a in keyed if a) or "no variable"
    return (
        f"`variable [{shown}]` in a model's output: an instance of `{b.head}` on {on}, a type "
        "the block does not bind: an instance binder must be found by a variable bound in the "
        "same block; on a closed type it is a hypothesis every theorem may use (it can give a "
        "library type other structure or notation)"
    )


def lean_binder_name(name: str) -> bool:
    """`inst`, `inst_1`, …: the names Lean gives instance binders itself (`inst✝`); a variable
    named so shadows nothing a statement means by the name."""
    return name == "inst" or (name.startswith("inst_") and name[5:].isdigit())


def unidentified_head(
    b: Binder, bound: set[str], tables: LibraryTables | None, opened: Sequence[str] = ()
) -> str | None:
    """Why an explicit or implicit `variable` binder is refused when math2 cannot tell whether
    its type is a class (fail closed): the type is a name applied to arguments none of which
    mentions a variable of the block (`(inst : LT ℕ)`, `(s : Finset ℕ)`), and the library's
    tables do not identify the name — Lean takes any local of a class type as an instance, so a
    class the tables miss (no library in the store, no toolchain's sources) would otherwise
    pass. None: the binder is an instance bracket, the type is a sort, a function type, a
    variable of the block or unapplied (`(x : ℝ)`), an argument is a variable (`Finset α`), or
    the tables know the name (and `class_of` said it is no class). `((LT ℕ))`, `@LT ℕ` are
    read as `LT ℕ`."""
    kind = list(b.type)
    while kind and kind[0].text in ("(", "@"):
        if kind[0].text == "(" and matching(kind, 0) != len(kind) - 1:
            break
        kind = kind[1:-1] if kind[0].text == "(" else kind[1:]
    b = Binder(b.bracket, b.names, kind, b.at)
    head = next((t for t in b.type if t.kind is Tok.IDENT), None)
    args = b.arguments()
    if b.is_instance or head is None or head is not b.type[0] or not args:
        return None
    name = normalise_name(head.text)
    level = depths(b.type)
    if (
        name in ("Type", "Sort", "Prop")
        or name in bound
        or any(t.text in ("→", "->", "×", "∀", "Π") and not level[k] for k, t in enumerate(b.type))
    ):
        return None
    if any(u.kind is Tok.IDENT and normalise_name(u.text) in bound for a in args for u in a):
        return None
    if tables is not None and any(tables(f) for f in tables.resolve(name, opened)):
        return None
    state = (
        "are not loaded: no library in the store, no toolchain's sources (`math2 lean setup`)"
        if tables is None or tables.empty
        else "do not hold it"
    )
    close = {"(": ")", "{": "}", "⦃": "⦄"}.get(b.bracket, ")")
    written = f"{b.bracket}{' '.join(n.text for n in b.names)} : {' '.join(t.text for t in b.type)}"
    return (
        f"`variable {written[:60]}{close}` in a model's output: math2 cannot tell whether "
        f"`{name}` is a class (the library's tables {state}); Lean takes a variable of a class "
        "type as an instance, so the binder is refused, not passed (fail closed)"
    )


def class_aliases(
    commands: list[Command], full_names: dict[int, str], tables: LibraryTables | None
) -> dict[str, list[Token]]:
    """The item's reducible aliases of a class application (`abbrev MyLT := LT ℕ`, `@[reducible]
    def MyLT := LT ℕ`): name (full and short) → the application its value is, so an instance
    of the alias is read as one of the class it unfolds to (on ℕ), as Lean's instance search
    reads it."""
    out: dict[str, list[Token]] = {}
    for i, c in enumerate(commands):
        if c.keyword not in ("def", "abbrev") or i not in full_names:
            continue
        stop = proof_start(c.body)
        value = through_aliases(c.body[stop + 1 :] if stop is not None else [], out)
        if value and class_of(value, tables) is not None:
            out[full_names[i]] = out[full_names[i].split(".")[-1]] = value
    return out


def through_aliases(kind: list[Token], aliases: dict[str, list[Token]]) -> list[Token]:
    """A type with a class alias at its head replaced by the application it stands for."""
    if kind and kind[0].kind is Tok.IDENT and (value := aliases.get(normalise_name(kind[0].text))):
        return [*value, *kind[1:]]
    return kind
