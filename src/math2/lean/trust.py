"""Two trust levels for what stands before a target theorem.

- `GENERATED` (the default everywhere): a model's block. The meaning rule: the environment
  after the block differs from the header's only by the target. Besides the target the block
  may open namespaces (no `renaming`, no `hiding`), open and close sections and namespaces,
  declare universes, and declare `variable`s that bind objects, or instance binders of classes
  over variables bound in the block (`variable {G : Type*} [Group G]`; not `[Fintype ℕ]`, not
  `[LT (Fin n)]`). Refused, each with its rule, line and column: any instance (by keyword,
  attribute, or `letI`/`haveI`/`inferInstanceAs` or a `let`/`have` of a class inside the
  statement's own type), definition, notation, attribute, option, `include`, a `variable` that
  is a hypothesis, and a `variable` named like a constant the statement mentions (or a
  look-alike of one). Formalize, eval, align and the RL reward check at this level.
- `BENCHMARK`: context written by people. The allowlist of docs/lean.md applies, and what could
  change a statement's meaning is *flagged* (`math2.lean.flags`), not refused.

Only the caller chooses the level; nothing in the data can.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from math2.lean.binders import Binder, binder_groups
from math2.lean.brackets import depths, proof_start
from math2.lean.commands import Command
from math2.lean.lexer import Tok, Token
from math2.lean.names import canonical, has_look_alike, look_alike_of
from math2.lean.rules import CORE_TYPES, OBJECT_TYPES, normalise_name
from math2.lean.terms import Violation, _v


class ContextTrust(StrEnum):
    """Who wrote the context of an item."""

    BENCHMARK = "benchmark"  # people: allowlisted commands, meaning-changers flagged
    GENERATED = "generated"  # a model: target, `open`, `variable`s of objects only


# Commands a model's block may hold besides its target.
_GENERATED_COMMANDS = frozenset(
    {"open", "namespace", "section", "end", "universe", "universes", "variable", "variables"}
)
# Tokens that make a binder's type a proposition (a hypothesis), not a type of objects.
_PROP_TOKENS = frozenset(
    {"=", "≠", "<", ">", "≤", "≥", "∣", "∀", "∃", "∃!", "↔", "∧", "∨", "¬", "∈", "∉",
     "⊆", "⊂", "⊇", "⊃", "≡", "False", "True", "Fact", "HEq", "Eq", "Ne", "NeZero"}
)  # fmt: skip
# Predicates whose application is a hypothesis (`(hp : p.Prime)`, `(h : Even n)`).
_PREDICATES = frozenset(
    {"Prime", "Even", "Odd", "IsUnit", "Squarefree", "Coprime", "Injective", "Surjective",
     "Bijective", "Continuous", "Differentiable", "Monotone", "StrictMono", "Antitone",
     "Nonempty", "Finite", "Infinite", "lt", "le", "Dvd"}
)  # fmt: skip
# Words that make an instance inside a term, whatever the context.
_INSTANCE_WORDS = frozenset({"letI", "haveI", "inferInstanceAs", "instance"})


def generated_rules(
    commands: list[Command],
    targets: set[int],
    offset: int,
    known_name: Callable[[str], bool] | None = None,
) -> list[Violation]:
    """The rules of a model's block (see the module docstring)."""
    out: list[Violation] = []
    bound: set[str] = set()  # variables bound by the block so far
    opened: list[str] = []  # namespaces opened (for resolving names against the library)
    mentioned = _mentioned(commands, targets)
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword in ("set_option", "include"):
                out.append(_refuse(p.tokens[0], f"`{p.keyword} … in`", offset))
            elif p.keyword == "open":
                out.extend(_open_rules(p, offset))
        stated = _statement_tokens(c) if i in targets else c.tokens  # a proof may use haveI
        for t in c.tokens:
            if t.text == "set_option":  # inside a term or tactic block too
                out.append(_refuse(t, "`set_option`", offset))
        for t in stated:
            if t.kind is Tok.IDENT and t.text in _INSTANCE_WORDS and t is not c.tokens[0]:
                out.append(_instance(t, f"`{t.text}` makes an instance", offset))
        for attrs in c.attributes:
            if any(t.text == "instance" for t in attrs):
                out.append(_instance(c.tokens[0], "`@[instance]`", offset))
        if i in targets:
            out.extend(_let_rules(c, offset))
            if any(t.kind is Tok.IDENT and has_look_alike(t.text) for t in c.tokens):
                out.extend(_look_alike_binders(c, mentioned, offset))
            continue
        if c.keyword in _GENERATED_COMMANDS:
            if c.keyword == "open":
                out.extend(_open_rules(c, offset))
                opened.extend(canonical(t.text) for t in c.body if t.kind is Tok.IDENT)
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


def _open_rules(c: Command, offset: int) -> list[Violation]:
    """`open … renaming`/`hiding` changes what a name of the statement refers to."""
    return [
        _v(
            "generated",
            t,
            f"`open … {t.text}` in a model's output changes what the statement's names mean",
            offset,
        )
        for t in c.body
        if t.kind is Tok.IDENT and t.text in ("renaming", "hiding")
    ]


def _statement_tokens(c: Command) -> list[Token]:
    """A target's tokens up to the `:=` of its proof."""
    stop = proof_start(c.body)
    return c.tokens[: c.keyword_index + 1] + (c.body[:stop] if stop is not None else c.body)


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


def _let_rules(c: Command, offset: int) -> list[Violation]:
    """A `let`/`have` inside the statement's own type that binds something of a class (an
    instance for the rest of the statement): one without a name, or whose type is not a type
    of objects or a proposition."""
    body = c.body
    stop = proof_start(body)
    sig = body[:stop] if stop is not None else body
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
        if colon is not None and rest[colon].text == ":":
            end = next((j for j, u in enumerate(rest) if u.text == ":="), len(rest))
            kind = rest[colon + 1 : end]
        if name == "_" or name.startswith("inst") or (kind and _class_like(kind)):
            out.append(_instance(t, f"`{t.text}` of a class in the statement", offset))
    return out


def _class_like(kind: list[Token]) -> bool:
    """Whether a type may be a class: not a proposition, and its head is not a type of objects."""
    if any(t.text in _PROP_TOKENS for t in kind):
        return kind[0].text in ("Fact", "NeZero")
    head = next((t for t in kind if t.kind is Tok.IDENT), None)
    if head is None:
        return False
    name = normalise_name(head.text)
    return name[:1].isupper() and name not in OBJECT_TYPES and not name.startswith("Type")


def _variable_rules(
    c: Command,
    offset: int,
    bound: set[str],
    mentioned: set[str],
    opened: list[str],
    known_name: Callable[[str], bool] | None,
) -> list[Violation]:
    """A `variable` of a model's block: no hypothesis, an instance only of a class over variables
    bound in the block, and no name that shadows a constant the statement mentions."""
    out: list[Violation] = []
    for t in c.body:
        name = normalise_name(t.text)
        if t.text in _PROP_TOKENS or (
            t.kind is Tok.IDENT and (name in _PROP_TOKENS or name.split(".")[-1] in _PREDICATES)
        ):
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
        instance = b.is_instance or (b.type and _class_like(b.type))
        if instance and (why := _closed_instance(b, bound)):
            out.append(_v("generated", b.at, why, offset))
        for n in b.names:
            if why := _shadows(n.text, mentioned, opened, known_name):
                out.append(_v("generated", n, why, offset))
            bound.add(normalise_name(n.text))
    return out


def _look_alike_binders(c: Command, mentioned: set[str], offset: int) -> list[Violation]:
    """A binder of the target named with look-alike letters of a core name (`(Νat : Type)`)."""
    out = []
    for b in binder_groups(_statement_tokens(c)[c.keyword_index + 2 :]):
        for n in b.names:
            name = normalise_name(n.text)
            like = look_alike_of(name, CORE_TYPES | (mentioned - {name}))
            if like is not None:
                why = f"the binder `{name}` looks like `{like}` (letters of another script)"
                out.append(_v("generated", n, why, offset))
    return out


def _closed_instance(b: Binder, bound: set[str]) -> str | None:
    """Why an instance binder is refused: none of its class's arguments is a variable bound in
    the block (`[Fintype ℕ]`, `[LT (Fin n)]`)."""
    args = b.arguments()
    if any(len(a) == 1 and normalise_name(a[0].text) in bound for a in args):
        return None
    shown = " ".join(t.text for t in b.type)[:60]
    return (
        f"`variable [{shown}]` in a model's output: an instance binder must be a class over "
        "variables bound in the same block; on a closed type it is a hypothesis every theorem "
        "may use (a false one makes any statement provable)"
    )


def _shadows(
    written: str, mentioned: set[str], opened: list[str], known_name: Callable[[str], bool] | None
) -> str | None:
    """Why a variable's name is refused: it is named like (or looks like) a constant the
    statement mentions."""
    name = normalise_name(written)
    like = look_alike_of(name, CORE_TYPES | mentioned)
    if like is not None and like != name:
        return f"the variable `{name}` looks like `{like}` (letters of another script)"
    if name not in mentioned:
        return None
    library = known_name is not None and any(
        known_name(".".join([*([ns] if ns else []), name])) for ns in ["", *opened]
    )
    if name in CORE_TYPES or library:
        return (
            f"the variable `{name}` shadows the constant `{name}` the statement mentions: the "
            "statement would read as the library's and mean the variable"
        )
    return None
