"""What a person's context (a benchmark's, `ContextTrust.BENCHMARK`) does that could change the
meaning of its target: flagged for the report and the review page, never refused, and never
escaped by spelling. Each flag's reason is true of the item.

- `core instance` / `instance`: every change to instance resolution — the `instance` keyword,
  `@[instance]`/`@[local instance]`/`@[default_instance]` on a declaration, `attribute [instance]`,
  `[local instance]`, `[-instance]` — on a core type (however written: `_root_.Nat`, `«Nat»`, an
  alias such as `abbrev N := ℕ`), a library type, or a type the item declares itself (then the
  reason says so); a `variable` instance binder none of whose class's arguments is a variable
  of the context (`[Fintype ℕ]`); an instance the target makes inside its own type (`letI`,
  `haveI`, `inferInstanceAs`, a `let`/`have` of a class); a part of a multi-part item that is
  an instance, when parts follow it (they are read under the instance its prover chooses);
- `notation`: a `local notation` whose only part is a token the item uses later and Lean or the
  library already has (`ℕ`, `π`, an operator);
- `shadowing`: a declaration or variable named like a name of the pinned library's name table
  (`known_name`: the store's Mathlib names), a core type, or inside a library namespace;
- `look-alike`: a name spelled with letters of another script that reads as a core name, a
  library name or another name of the item (`Νat` with a Greek Nu);
- `hypothesis`: a `variable` that is a proposition (Lean's syntax of one, or a name the
  library's tables give as Prop-valued: `Nat.Prime`, `False`), or a binder of a Prop-valued
  class (`[Nontrivial α] [Subsingleton α]` together prove `False`);
- `open`: `open … renaming`/`hiding` (also `… in`); `instance` also for `open` of a library
  namespace with scoped instances (`open PiCountable`);
- `unlabelled parts` (hygiene.py): several theorems each proved by `sorry`, no part names;
- `include` and `clamped` (hygiene.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from math2.lean.binders import Binder, binder_groups
from math2.lean.brackets import depths, proof_start
from math2.lean.classes import (
    class_aliases,
    class_of,
    closed_instance,
    hypothesis_token,
    scoped_opens,
    through_aliases,
)
from math2.lean.commands import Command, namespaces, scope_names
from math2.lean.core_types import core_among, core_types_of
from math2.lean.lexer import Tok, Token
from math2.lean.library import ClassInfo, LibraryTables
from math2.lean.name_flags import look_alike_flags, name_flags
from math2.lean.names import has_look_alike, latin_skeleton
from math2.lean.rules import normalise_name
from math2.lean.terms import Violation, _v
from math2.lean.trust import statement_instances

_INSTANCE_ATTRIBUTES = frozenset({"instance", "default_instance"})


def benchmark_flags(
    commands: list[Command],
    targets: set[int],
    full_names: dict[int, str],
    offset: int,
    known_name: LibraryTables | None = None,
) -> list[Violation]:
    """The flags of a person's context (see the module docstring)."""
    own = {n for n in full_names.values()} | {n.split(".")[-1] for n in full_names.values()}
    aliases = _aliases(commands, full_names, core_types_of(known_name))
    classes = class_aliases(commands, full_names, known_name)  # `abbrev MyLT := LT ℕ`
    attributes = any(c.keyword == "attribute" for c in commands)
    signatures = _signatures(commands, full_names, classes) if attributes else {}
    used_later = _identifiers_after(commands)
    # the commands with letters that look like Latin ones (only there can a name be a look-alike)
    texts = ["".join([t.text for t in c.tokens]) for c in commands]
    exotic = {i for i, x in enumerate(texts) if not x.isascii() and latin_skeleton(x) != x}
    every = _ItemNames(commands)  # the item's names, read where a look-alike needs them
    out: list[Violation] = []
    bound: set[str] = set()  # the variables the context binds so far
    opened = namespaces(commands)  # where a variable's name may shadow a library name
    scopes = scope_names(commands)  # the namespaces entered before each command
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword == "include":
                out.append(
                    _v("include", p.tokens[0], "`include` adds variables to the target", offset)
                )
            elif p.keyword == "open":
                out.extend(_open_flags(p, known_name, offset, scopes[i]))
        if c.keyword in ("open", "namespace") and i not in targets:  # a namespace opens its scope
            out.extend(_open_flags(c, known_name, offset, scopes[i]))
        if i in targets:
            out.extend(_statement_instance_flags(c, offset, known_name, opened))
            if any(j > i for j in targets):  # a part that is an instance: later parts use it
                out.extend(
                    _instance_flags(c, own, aliases, signatures, classes, known_name, offset)
                )
        if i not in targets:
            out.extend(_instance_flags(c, own, aliases, signatures, classes, known_name, offset))
            if c.keyword in ("variable", "variables"):
                out.extend(_variable_instance_flags(c, bound, aliases, known_name, opened, offset))
            out.extend(_notation_flags(c, used_later.get(i, set()), known_name, offset))
            if c.keyword in ("variable", "variables"):
                t = hypothesis_token(c.body, known_name, opened)
                if t is not None:
                    why = f"a variable that is a hypothesis (`{t.text}`)"
                    out.append(_v("hypothesis", t, why, offset))
            out.extend(name_flags(c, i, full_names, every, known_name, offset, opened, used_later))
        elif i in exotic and any(t.kind is Tok.IDENT and has_look_alike(t.text) for t in c.tokens):
            out.extend(look_alike_flags(c, every, offset, known_name, opened))
    return out


class _ItemNames:
    """The names an item uses, read once and only when asked (a look-alike's question)."""

    def __init__(self, commands: list[Command]):
        self.commands = commands
        self._names: set[str] | None = None

    def __call__(self) -> set[str]:
        if self._names is None:
            self._names = {
                normalise_name(t.text) if "«" in t.text or "_root_" in t.text else t.text
                for c in self.commands
                for t in c.tokens
                if t.kind is Tok.IDENT
            }
        return self._names


def _variable_instance_flags(
    c: Command,
    bound: set[str],
    aliases: dict[str, set[str]],
    tables: LibraryTables | None,
    opened: Sequence[str],
    offset: int,
) -> list[Violation]:
    """A `variable` instance binder none of whose class arguments that Lean finds it by is a
    variable bound before it (`[Fintype ℕ]`, `[LT (Fin n)]`, `[Membership β (Set ℕ)]`): a
    local instance every theorem that can use it assumes; a binder of a Prop-valued class: a
    hypothesis (two can contradict each other)."""
    out = []
    for b in binder_groups(c.body):
        info = class_of(b.type, tables, opened)
        instance = b.is_instance or info is not None
        if info is not None and info.prop:  # `[Nontrivial α] [Subsingleton α]` contradict
            closed = " on a closed type" if closed_instance(b, bound, info) else ""
            why = (
                f"`variable [{shown(b.type)}]`: `{info.name}` is a Prop-valued class, so the "
                f"binder{closed} is a hypothesis every theorem that can use it assumes"
            )
            out.append(_v("hypothesis", b.at, why, offset))
        elif instance and closed_instance(b, bound, info):
            text = shown(b.type)
            names = {normalise_name(t.text) for t in b.type[1:] if t.kind is Tok.IDENT}
            core = core_among(names - bound, core_types_of(tables)) + sorted(
                f"{n} (an alias of {', '.join(sorted(aliases[n]))})" for n in names & set(aliases)
            )
            rule = "core instance" if core else "instance"
            on = f" (on {', '.join(core)})" if core else ""
            why = (
                f"`variable [{text}]`: {_instance_of(b.type, info, tables)}{on} "
                "and none of the class's arguments it is found by is a variable of the context: "
                "a local instance every theorem that can use it assumes"
            )
            out.append(_v(rule, b.at, why, offset))
        bound.update(normalise_name(n.text) for n in b.names)
    return out


def _open_flags(
    c: Command, tables: LibraryTables | None, offset: int, enclosing: Sequence[str]
) -> list[Violation]:
    """`open … renaming`/`hiding` (a name of the statement may mean another constant) and
    `open` of a library namespace with scoped instances (a change to instance resolution)."""
    out = [
        _v("open", t, f"`open … {t.text}` changes what the statement's names refer to", offset)
        for t in c.body
        if t.kind is Tok.IDENT and t.text in ("renaming", "hiding")
    ]
    scoped = scoped_opens(c, tables, enclosing)
    return out + [_v("instance", t, why, offset) for t, _, why in scoped]


def shown(toks: Sequence[Token]) -> str:
    """Tokens as one readable line (`(Fin n)`, not `( Fin n )`)."""
    text = " ".join(t.text for t in toks)
    for a, b in (("( ", "("), (" )", ")"), ("[ ", "["), (" ]", "]"), (" ,", ",")):
        text = text.replace(a, b)
    return text[:60]


def _instance_of(kind: list[Token], info: ClassInfo | None, tables: LibraryTables | None) -> str:
    """`an instance of `LT` on `ℕ`` (with the classes it extends, from the class table)."""
    head = next((t for t in kind if t.kind is Tok.IDENT), None)
    if head is None:
        return "an instance"
    binder = Binder("[", [], kind, head)
    on = ", ".join(shown(a) for a in binder.arguments()) or "no argument"
    parents = tables.ancestors(info)[:6] if tables is not None and info is not None else []
    extends = f" (which extends {', '.join(parents)})" if parents else ""
    return f"an instance of `{normalise_name(head.text)}`{extends} on `{on}`"


def _statement_instance_flags(
    c: Command, offset: int, tables: LibraryTables | None, opened: Sequence[str]
) -> list[Violation]:
    """An instance made inside the target's own type (`letI`, `haveI`, `inferInstanceAs`, a
    `let`/`have` of a class): it changes what the rest of the statement's operations mean."""
    tail = " inside the statement: an instance it makes itself changes what its operations mean"
    return [
        v.model_copy(
            update={"rule": "instance", "detail": v.detail.split(" in a model's output")[0] + tail}
        )
        for v in statement_instances(c, offset, None, tables, opened)
    ]


def _aliases(
    commands: list[Command], full_names: dict[int, str], core_types: frozenset[str] | None
) -> dict[str, set[str]]:
    """Names the item defines as another name for core types (`abbrev N := ℕ`): name → the
    core types its body names (without tables, every name it names: fail closed)."""
    out: dict[str, set[str]] = {}
    for i, c in enumerate(commands):
        if c.keyword not in ("def", "abbrev") or i not in full_names:
            continue
        rest = c.body[1:]
        stop = proof_start(rest)
        if stop is None or any(
            t.kind is Tok.SYMBOL and t.text not in (":", "*") for t in rest[:stop]
        ):
            continue  # a function or a value, not another name for a type
        if any(t.kind is Tok.IDENT and t.text not in ("Type", "Sort") for t in rest[:stop]):
            continue
        value = [normalise_name(t.text) for t in rest[stop + 1 :] if t.kind is Tok.IDENT]
        core = {n for n in value if core_types is None or n in core_types}
        core |= {x for n in value for x in out.get(n, set())}
        if core:
            full = full_names[i]
            out[full] = core
            out[full.split(".")[-1]] = core
    return out


def _signatures(
    commands: list[Command], full_names: dict[int, str], classes: dict[str, list[Token]]
) -> dict[str, list[str]]:
    """The identifiers of each named declaration's type (before its `:=`), by full and short
    name."""
    out: dict[str, list[str]] = {}
    for i, c in enumerate(commands):
        if i in full_names:
            subjects = _subjects(through_aliases(_declared_type(c.body[1:]), classes))
            out[full_names[i]] = out[full_names[i].split(".")[-1]] = subjects
    return out


def _declared_type(decl: list[Token]) -> list[Token]:
    """The type of a declaration (after its top-level `:`, before `:=`)."""
    stop = proof_start(decl)
    sig = decl[:stop]
    level = depths(sig)
    colon = next((k for k, t in enumerate(sig) if t.text == ":" and not level[k]), -1)
    return sig[colon + 1 :]


def _subjects(kind: list[Token]) -> list[str]:
    """What an instance of this type is on: the head of each argument of its class
    (`LinearOrder (Polynomial ℚ)` → Polynomial; `LT N` → N)."""
    binder = Binder("[", [], kind, kind[0]) if kind else None
    if binder is None:
        return []
    heads = []
    for arg in binder.arguments():
        head = next((t for t in arg if t.kind is Tok.IDENT), None)
        if head is not None:
            heads.append(normalise_name(head.text))
    return heads


def _instance_flags(
    c: Command,
    own: set[str],
    aliases: dict[str, set[str]],
    signatures: dict[str, list[str]],
    classes: dict[str, list[Token]],
    known_name: LibraryTables | None,
    offset: int,
) -> list[Violation]:
    """An instance made by keyword or attribute, with what it is on (for an attribute on a
    declaration of the item: what that declaration's type is about; through the item's class
    aliases: `instance : MyLT` with `abbrev MyLT := LT ℕ` is on ℕ)."""
    how = None
    if c.keyword == "instance":
        how = "an instance"
    elif any(_instance_attribute(a) for a in c.attributes):
        how = "`@[instance]` on a declaration: an instance"
    elif c.keyword == "attribute" and _instance_attribute(c.body):
        word = next(t.text for t in c.body if t.text in _INSTANCE_ATTRIBUTES)
        removed = "-" if any(t.text == "-" for t in c.body[:4]) else ""
        scope = next((t.text + " " for t in c.body[:4] if t.text in ("local", "scoped")), "")
        how = f"`attribute [{scope}{removed}{word}]`: a change to instance resolution"
    if how is None:
        return []
    at = c.tokens[c.keyword_index]
    if c.keyword == "attribute":
        written = [normalise_name(t.text) for t in c.body if t.kind is Tok.IDENT]
        written = [n for n in written if n not in _INSTANCE_ATTRIBUTES | {"local", "scoped"}]
        names = [x for n in written for x in signatures.get(n, [n])]
        what = f"on `{', '.join(written)}`" if written else ""
    else:  # a declaration: what its type is about, not its body
        kind = through_aliases(_declared_type(c.body), classes)
        names = _subjects(kind)
        what = _instance_of(kind, class_of(kind, known_name), known_name)
    how = f"{how} ({what})" if what else how
    core = core_among([n for n in names if n not in own], core_types_of(known_name))
    via = sorted(
        {f"{n} (an alias of {', '.join(sorted(aliases[n]))})" for n in names if n in aliases}
    )
    if core or via:
        on = ", ".join([*core, *via])
        return [
            _v("core instance", at, f"{how} on {on} changes what statements about it mean", offset)
        ]
    library = sorted(
        {
            n
            for n in names
            if n not in own
            and n[:1].isupper()
            and known_name is not None
            and (known_name(n) or known_name.namespace(n.split(".")[0]))
        }
    )
    if library:
        why = f"{how} on the library's {', '.join(library)} changes what statements about it mean"
        return [_v("instance", at, why, offset)]
    mine = sorted({n for n in names if n in own})
    if mine:
        why = f"{how} on {', '.join(mine)}, which the item declares"
        return [_v("instance", at, why, offset)]
    return [_v("instance", at, f"{how} changes instance resolution for what follows", offset)]


def _instance_attribute(inner: list[Token]) -> bool:
    return any(t.kind is Tok.IDENT and t.text in _INSTANCE_ATTRIBUTES for t in inner)


def _identifiers_after(commands: list[Command]) -> dict[int, set[str]]:
    """For each command, the token texts of the commands after it."""
    out: dict[int, set[str]] = {}
    later: set[str] = set()
    for i in range(len(commands) - 1, -1, -1):
        out[i] = set(later)
        later |= {t.text for t in commands[i].tokens}
    return out


def _notation_flags(
    c: Command, later: set[str], tables: LibraryTables | None, offset: int
) -> list[Violation]:
    """A `local notation` one of whose tokens Lean or the library has (the tables' notation
    atoms and names) and the statement uses later, whatever attributes it carries (`(name :=
    …)`, `(priority := …)`, `:prec`). Where the tables cannot say (the store keeps no notation,
    or there are no tables), every such token the statement uses is flagged: fail closed."""
    if c.keyword not in ("notation", "notation3"):
        return []
    arrow = next((k for k, t in enumerate(c.body) if t.text == "=>"), len(c.body))
    atoms = [t.text[1:-1].strip() for t in c.body[:arrow] if t.kind is Tok.STRING]
    out = []
    for atom in dict.fromkeys(atoms):
        if atom not in later:
            continue
        existing = tables.token(atom) if tables is not None else None
        if existing is False:
            continue
        why = f'`{c.keyword}` with "{atom}" redefines `{atom}`, which the statement uses'
        if existing is None:
            why = (
                f'`{c.keyword}` with "{atom}", which the statement uses: the library\'s notation '
                f'table is not loaded, so math2 cannot tell whether "{atom}" is Lean\'s or the '
                "library's (flagged, fail closed)"
            )
        out.append(_v("notation", c.tokens[c.keyword_index], why, offset))
    return out
