"""Two trust levels for what stands before a target theorem.

- `GENERATED` (the default everywhere): a model's block. The meaning rule: the environment
  after the block differs from the header's only by the target. Besides the target the block
  may open namespaces (no `renaming`, no `hiding`), open and close sections and namespaces,
  declare universes, and declare `variable`s that bind objects, or instance binders of classes
  over variables bound in the block (`variable {G : Type*} [Group G]`; not `[Fintype ℕ]`, not
  `[LT (Fin n)]`). Refused, each with its rule, line and column: any instance (by keyword,
  attribute, or `letI`/`haveI`/`inferInstanceAs` or a `let`/`have` of a class inside the
  statement's own type, the class written or stated by the value: `let o := (⟨…⟩ : LT ℕ)`),
  definition, notation, attribute, option, `include`, a `variable` that is a hypothesis, and a
  `variable` named like a constant the statement mentions (or a look-alike of one), the
  constant looked up in every namespace the block opens or enters. Formalize, eval, align and
  the RL reward check at this level.
- `BENCHMARK`: context written by people. The allowlist of docs/lean.md applies, and what could
  change a statement's meaning is *flagged* (`math2.lean.flags`), not refused.

Only the caller chooses the level; nothing in the data can.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from math2.lean.binders import Binder, binder_groups, binder_of
from math2.lean.brackets import depths, matching, proof_start
from math2.lean.classes import (
    class_of,
    closed_instance,
    hypothesis_token,
    lean_binder_name,
    library_look_alike,
    look_alike_binders,
    scoped_opens,
    unidentified_head,
)
from math2.lean.commands import Command, namespaces, scope_names
from math2.lean.core_types import core_types_of, look_alike, unknown_constant
from math2.lean.lexer import Tok, Token
from math2.lean.library import LibraryTables
from math2.lean.names import has_look_alike, plain_variable_name
from math2.lean.rules import normalise_name
from math2.lean.terms import Violation, _v


class ContextTrust(StrEnum):
    """Who wrote the context of an item."""

    BENCHMARK = "benchmark"  # people: allowlisted commands, meaning-changers flagged
    GENERATED = "generated"  # a model: target, `open`, `variable`s of objects only


# Commands a model's block may hold besides its target.
_GENERATED_COMMANDS = frozenset(
    {"open", "namespace", "section", "end", "universe", "universes", "variable", "variables"}
)
# Words that make an instance inside a term, whatever the context.
_INSTANCE_WORDS = frozenset({"letI", "haveI", "inferInstanceAs", "instance"})


def generated_rules(
    commands: list[Command],
    targets: set[int],
    offset: int,
    known_name: LibraryTables | None = None,
) -> list[Violation]:
    """The rules of a model's block (see the module docstring)."""
    out: list[Violation] = []
    bound: set[str] = set()  # variables bound by the block so far
    # every namespace the block opens or enters, wherever: a variable shadows a constant of one
    # whether it comes before the `open` or after, and inside `namespace Real` as after `open`
    opened = namespaces(commands)
    mentioned = _mentioned(commands, targets)
    scopes = scope_names(commands)  # the namespaces entered before each command
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword in ("set_option", "include"):
                out.append(_refuse(p.tokens[0], f"`{p.keyword} … in`", offset))
            elif p.keyword == "open":
                out.extend(_open_rules(p, offset, known_name, scopes[i]))
        for t in c.tokens:
            if t.text == "set_option":  # inside a term or tactic block too
                out.append(_refuse(t, "`set_option`", offset))
        if i not in targets:
            for t in c.tokens:
                if t.kind is Tok.IDENT and t.text in _INSTANCE_WORDS and t is not c.tokens[0]:
                    out.append(_instance(t, f"`{t.text}` makes an instance", offset))
        for attrs in c.attributes:
            if any(t.text == "instance" for t in attrs):
                out.append(_instance(c.tokens[0], "`@[instance]`", offset))
        if i in targets:
            # a proof may use haveI
            out.extend(statement_instances(c, offset, bound, known_name, opened))
            if any(t.kind is Tok.IDENT and has_look_alike(t.text) for t in c.tokens):
                out.extend(_look_alike_binders(c, mentioned, offset, known_name, opened))
            continue
        if c.keyword in _GENERATED_COMMANDS:
            if c.keyword in ("open", "namespace"):  # entering a namespace opens its scope
                out.extend(_open_rules(c, offset, known_name, scopes[i]))
            elif c.keyword in ("variable", "variables"):
                out.extend(_variable_rules(c, offset, bound, mentioned, opened, known_name))
            continue
        out.append(_refuse(c.tokens[c.keyword_index], f"`{c.keyword}`", offset))
    return out


def _refuse(t: Token, what: str, offset: int) -> Violation:
    return _v(
        "generated",
        t,
        f"{what} in a model's output: generated code may only hold the target theorem, `open` "
        "and `variable`s of objects (an instance, definition, notation, option, "
        "hypothesis or `include` could change what the statement means)",
        offset,
    )


def _instance(t: Token, what: str, offset: int) -> Violation:
    return _v(
        "generated",
        t,
        f"{what} in a model's output: an instance made by the statement itself changes what "
        "its operations mean",
        offset,
    )


def _open_rules(
    c: Command, offset: int, tables: LibraryTables | None, enclosing: Sequence[str]
) -> list[Violation]:
    """`open … renaming`/`hiding` changes what a name of the statement refers to; `open` of a
    namespace with scoped instances changes instance resolution."""
    out = [
        _v(
            "generated",
            t,
            f"`open … {t.text}` in a model's output changes what the statement's names mean",
            offset,
        )
        for t in c.body
        if t.kind is Tok.IDENT and t.text in ("renaming", "hiding")
    ]
    out += [
        _v("generated", t, f"`open {ns}` in a model's output: {why}", offset)
        for t, ns, why in scoped_opens(c, tables, enclosing)
    ]
    return out


def _mentioned(commands: list[Command], targets: set[int]) -> set[str]:
    """The identifiers the targets mention (their name parts too: `Real.pi` → Real, pi)."""
    out: set[str] = set()
    for i in targets:
        for t in commands[i].body[1:]:
            if t.kind is Tok.IDENT:
                name = normalise_name(t.text)
                out.add(name)
                out.update(name.split("."))
    return out


def statement_instances(
    c: Command,
    offset: int,
    bound: set[str] | None = None,
    tables: LibraryTables | None = None,
    opened: Sequence[str] = (),
) -> list[Violation]:
    """The instances a target makes inside its own type: `letI`, `haveI`, `inferInstanceAs`,
    a `let`/`have` of a class (its proof may use them), and a binder of a class on a closed
    type under `∃`, `fun`, `Σ` (`∃ i : LT ℕ, (3 : ℕ) < 2`: the proof chooses the instance).
    `bound`: the block's variables (None where they are not known: then a one-word argument
    that is not a core type counts as a variable)."""
    stop = proof_start(c.body)
    sig = c.body[:stop] if stop is not None else c.body
    words = {t.text for t in sig}  # each pass below only where its words occur
    head = c.tokens[: c.keyword_index + 1]
    out = []
    if words & _INSTANCE_WORDS or any(t.text in _INSTANCE_WORDS for t in head):
        out = [
            _instance(t, f"`{t.text}` makes an instance", offset)
            for t in [*head, *sig]
            if t.kind is Tok.IDENT and t.text in _INSTANCE_WORDS and t is not c.tokens[0]
        ]
    if words & _BINDING:
        out += _let_rules(sig, offset, tables, opened)
    if words & _CHOOSING:
        out += _chosen_instances(sig, offset, bound, tables, opened)
    return out


_BINDING = frozenset({"let", "have", "set"})


# Binders whose value the statement's proof chooses (an existential) or the statement itself
# gives (a function applied): a local of a class type under them is an instance of its choice.
_CHOOSING = frozenset({"∃", "∃!", "exists", "fun", "λ", "Σ", "Σ'", "Exists"})


def _chosen_instances(
    sig: list[Token],
    offset: int,
    bound: set[str] | None,
    tables: LibraryTables | None,
    opened: Sequence[str],
) -> list[Violation]:
    known = set(bound or ()) | {
        normalise_name(n.text) for b in binder_groups(sig[1:]) for n in b.names
    }
    level = depths(sig)
    out = []
    for k, t in enumerate(sig):
        if t.text not in _CHOOSING:
            continue
        end = next(
            (
                j
                for j in range(k + 1, len(sig))
                if sig[j].text in (",", "=>", "↦") and level[j] == level[k]
            ),
            len(sig),
        )
        part = sig[k + 1 : end]
        # `∃ i j : T,`: one group without brackets
        groups = binder_groups(part) or [binder_of(t, part)]
        for b in groups:
            closed = _closed(b, known, bound, tables)
            if (b.is_instance or class_of(b.type, tables, opened)) and closed:
                shown = " ".join(u.text for u in b.type)[:60]
                why = f"a binder of the class `{shown}` under `{t.text}` (an instance it chooses)"
                out.append(_instance(t, why, offset))
            known.update(normalise_name(n.text) for n in b.names)
    return out


def _closed(
    b: Binder, known: set[str], bound: set[str] | None, tables: LibraryTables | None
) -> bool:
    """Whether a class binder's arguments mention no variable (`LT ℕ`, not `Fintype (R ⧸ I)`
    with `I` bound by the statement). Where the block's variables are not known (`bound` None:
    a person's context), a one-word argument is taken for one unless it is a core type or a
    name or notation token of the library's tables (`LT Cardinal` is closed)."""
    for a in b.arguments():
        for u in a:
            if u.kind is not Tok.IDENT:
                continue
            name = normalise_name(u.text)
            core = core_types_of(tables)  # without tables none is known a variable: closed
            library = core is None or name in core or bool(tables and tables.token(name))
            if name in known or (bound is None and len(a) == 1 and not library):
                return False
    return True


def _let_rules(
    sig: list[Token], offset: int, tables: LibraryTables | None, opened: Sequence[str]
) -> list[Violation]:
    """A `let`/`have` inside the statement's own type (`sig`: a target's tokens up to its
    proof) that binds something of a class (an instance for the rest of the statement): one
    without a name, or whose type is not a type of objects or a proposition."""
    out = []
    level = depths(sig)
    for k, t in enumerate(sig):
        if t.kind is not Tok.IDENT or t.text not in ("let", "have", "set"):
            continue
        rest = sig[k + 1 :]
        name = rest[0].text if rest and rest[0].kind is Tok.IDENT else "_"
        colon = next(
            (
                j
                for j, u in enumerate(rest)
                if u.text in (":", ":=") and level[k + 1 + j] == level[k]
            ),
            None,
        )
        kind = []
        end = next((j for j, u in enumerate(rest) if u.text == ":="), len(rest))
        if colon is not None and rest[colon].text == ":":
            kind = rest[colon + 1 : end]
        else:  # no type written: the value's own ascription gives it (`let x := (⟨…⟩ : LT ℕ)`)
            kind = _ascribed_type(rest[end + 1 :])
        if name == "_" or name.startswith("inst") or (kind and class_of(kind, tables, opened)):
            out.append(_instance(t, f"`{t.text}` of a class in the statement", offset))
    return out


def _ascribed_type(value: list[Token]) -> list[Token]:
    """The type a value states for itself: `T` of `(e : T)` or of `show T from e` (Lean gives a
    `let` without a type the value's type, and a local of a class type is an instance)."""
    if not value:
        return []
    if value[0].text == "(":
        close = matching(value, 0)
        inner = value[1:close] if close is not None else value[1:]
        level = depths(inner)
        colon = next((j for j, u in enumerate(inner) if u.text == ":" and level[j] == 0), None)
        return inner[colon + 1 :] if colon is not None else []
    if value[0].text == "show":
        level = depths(value)
        stop = next(
            (j for j, u in enumerate(value) if u.text in ("from", "by", ";") and not level[j]),
            len(value),
        )
        return value[1:stop]
    return []


def _variable_rules(
    c: Command,
    offset: int,
    bound: set[str],
    mentioned: set[str],
    opened: list[str],
    tables: LibraryTables | None,
) -> list[Violation]:
    """A `variable` of a model's block: no hypothesis (nor a binder of a Prop-valued class), an
    instance only of a class that finds it by a variable of the block, and no name that shadows
    a constant the statement mentions."""
    out: list[Violation] = []
    if (t := hypothesis_token(c.body, tables, opened)) is not None:
        return [
            _v(
                "generated",
                t,
                f"`variable` with `{t.text}` declares a hypothesis; in a model's output a "
                "variable may only be an object of a type or a class instance on it",
                offset,
            )
        ]
    for b in binder_groups(c.body):
        info = class_of(b.type, tables, opened)
        if info is not None and info.prop:
            shown = " ".join(t.text for t in b.type)[:60]
            hypothesis = (
                f"`variable [{shown}]` in a model's output: `{info.name}` is a Prop-valued class, "
                "so the binder is a hypothesis every theorem over its variables assumes (two "
                "such can contradict each other: `[Nontrivial α] [Subsingleton α]`)"
            )
            out.append(_v("generated", b.at, hypothesis, offset))
        elif (b.is_instance or info is not None) and (closed := closed_instance(b, bound, info)):
            out.append(_v("generated", b.at, closed, offset))
        elif info is None and (unknown := unidentified_head(b, bound, tables, opened)):
            out.append(_v("generated", b.at, unknown, offset))
        for n in b.names:
            if shadow := _shadows(n.text, mentioned, opened, tables):
                out.append(_v("generated", n, shadow, offset))
            bound.add(normalise_name(n.text))
    return out


def _look_alike_binders(
    c: Command,
    mentioned: set[str],
    offset: int,
    tables: LibraryTables | None,
    opened: Sequence[str],
) -> list[Violation]:
    """A binder of the target named with look-alike letters of a core or library name."""
    return [
        _v(
            "generated",
            n,
            f"the binder `{name}` looks like `{like}` (letters of another script)",
            offset,
        )
        for n, name, like in look_alike_binders(c, mentioned, tables, opened)
    ]


def _shadows(
    written: str, mentioned: set[str], opened: list[str], tables: LibraryTables | None
) -> str | None:
    """Why a variable's name is refused: it is named like (or looks like) a constant the
    statement mentions, or looks like a library name under an opened namespace."""
    name = normalise_name(written)
    core = core_types_of(tables)
    like = look_alike(name, mentioned, core) or library_look_alike(name, tables, opened)
    if like is not None and like != name:
        return f"the variable `{name}` looks like `{like}` (letters of another script)"
    if name not in mentioned or lean_binder_name(name):
        return None
    library = tables is not None and any(tables(f) for f in tables.resolve(name, opened))
    if (core is not None and name in core) or library:
        return (
            f"the variable `{name}` shadows the constant `{name}` the statement mentions: the "
            "statement would read as the library's and mean the variable"
        )
    if core is None and not plain_variable_name(name):  # fail closed: `Real`, `ℕ` untold
        return (
            f"the variable `{name}` may shadow a constant the statement mentions "
            f"({unknown_constant(tables)})"
        )
    return None
