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

from collections.abc import Callable
from enum import StrEnum

from math2.lean.binders import Binder, binder_groups, binder_of
from math2.lean.brackets import depths, matching, proof_start
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
    # every namespace the block opens or enters, wherever: a variable shadows a constant of one
    # whether it comes before the `open` or after, and inside `namespace Real` as after `open`
    opened = namespaces(commands)
    mentioned = _mentioned(commands, targets)
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword in ("set_option", "include"):
                out.append(_refuse(p.tokens[0], f"`{p.keyword} … in`", offset))
            elif p.keyword == "open":
                out.extend(_open_rules(p, offset))
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
            out.extend(statement_instances(c, offset, bound))  # a proof may use haveI
            if any(t.kind is Tok.IDENT and has_look_alike(t.text) for t in c.tokens):
                out.extend(_look_alike_binders(c, mentioned, offset))
            continue
        if c.keyword in _GENERATED_COMMANDS:
            if c.keyword == "open":
                out.extend(_open_rules(c, offset))
            elif c.keyword in ("variable", "variables"):
                out.extend(_variable_rules(c, offset, bound, mentioned, opened, known_name))
            continue
        out.append(_refuse(c.tokens[c.keyword_index], f"`{c.keyword}`", offset))
    return out


def namespaces(commands: list[Command]) -> list[str]:
    """The namespaces a block's names may resolve in: those it opens (as a command or an
    `open … in` prefix) and those it enters with every enclosing one (`namespace A.B` inside
    `namespace C`: C.A.B, C.A, C)."""
    out: list[str] = []
    inside: list[str] = []
    for c in commands:
        for p in [*c.prefixes, c]:
            words = [canonical(t.text) for t in p.body if t.kind is Tok.IDENT]
            if p.keyword == "open":
                out.extend(words)
            elif p.keyword == "namespace" and words:
                inside.append(words[0])
                full = ".".join(inside)
                parts = full.split(".")
                out.extend(".".join(parts[:k]) for k in range(len(parts), 0, -1))
            elif p.keyword == "end" and words and inside:
                inside.pop()
    return list(dict.fromkeys(out))


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


def statement_instances(c: Command, offset: int, bound: set[str] | None = None) -> list[Violation]:
    """The instances a target makes inside its own type: `letI`, `haveI`, `inferInstanceAs`,
    a `let`/`have` of a class (its proof may use them), and a binder of a class on a closed
    type under `∃`, `fun`, `Σ` (`∃ i : LT ℕ, (3 : ℕ) < 2`: the proof chooses the instance).
    `bound`: the block's variables (None where they are not known: then a one-word argument
    that is not a core type counts as a variable)."""
    out = [
        _instance(t, f"`{t.text}` makes an instance", offset)
        for t in _statement_tokens(c)
        if t.kind is Tok.IDENT and t.text in _INSTANCE_WORDS and t is not c.tokens[0]
    ]
    return out + _let_rules(c, offset) + _chosen_instances(c, offset, bound)


# Binders whose value the statement's proof chooses (an existential) or the statement itself
# gives (a function applied): a local of a class type under them is an instance of its choice.
_CHOOSING = frozenset({"∃", "∃!", "exists", "fun", "λ", "Σ", "Σ'", "Exists"})


def _chosen_instances(c: Command, offset: int, bound: set[str] | None) -> list[Violation]:
    body = c.body
    stop = proof_start(body)
    sig = body[:stop] if stop is not None else body
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
            if (b.is_instance or _known_class(b)) and _closed(b, known, bound):
                shown = " ".join(u.text for u in b.type)[:60]
                why = f"a binder of the class `{shown}` under `{t.text}` (an instance it chooses)"
                out.append(_instance(t, why, offset))
            known.update(normalise_name(n.text) for n in b.names)
    return out


# Classes of core Lean and Mathlib a statement's binder may name (`(i : LT ℕ)`): written without
# instance brackets, a binder is taken for an instance only when its head is one of these (a
# structure such as `SimpleGraph (Fin 5)` under `∃` is an object, not an instance).
_KNOWN_CLASSES = frozenset(
    {"LT", "LE", "Preorder", "PartialOrder", "LinearOrder", "Lattice", "Ord", "Max", "Min",
     "Zero", "One", "Add", "Sub", "Mul", "Div", "Neg", "Inv", "Pow", "Mod", "Dvd", "SMul",
     "HAdd", "HSub", "HMul", "HDiv", "HPow", "HMod", "HSMul", "OfNat", "NatCast", "IntCast",
     "Semigroup", "Monoid", "CommMonoid", "AddMonoid", "AddCommMonoid", "Group", "CommGroup",
     "AddGroup", "AddCommGroup", "Semiring", "CommSemiring", "Ring", "CommRing", "Field",
     "DivisionRing", "Module", "Algebra", "Norm", "Dist", "TopologicalSpace", "MetricSpace",
     "PseudoMetricSpace", "UniformSpace", "MeasurableSpace", "Fintype", "Finite", "Infinite",
     "Countable", "Inhabited", "Nonempty", "Decidable", "DecidableEq", "DecidablePred",
     "DecidableRel", "Fact", "NeZero", "Setoid", "BEq", "Hashable", "Repr", "ToString",
     "CharZero", "CharP", "NormedField", "NormedAddCommGroup", "InnerProductSpace",
     "OrderedSemiring", "StrictOrderedSemiring", "LinearOrderedField", "IsDomain"}
)  # fmt: skip


def _known_class(b: Binder) -> bool:
    head = next((t for t in b.type if t.kind is Tok.IDENT), None)
    return head is not None and normalise_name(head.text).removeprefix("_root_.") in _KNOWN_CLASSES


def _closed(b: Binder, known: set[str], bound: set[str] | None) -> bool:
    """Whether a class binder's arguments mention no variable (`LT ℕ`, not `Fintype (R ⧸ I)`
    with `I` bound by the statement)."""
    for a in b.arguments():
        for u in a:
            if u.kind is not Tok.IDENT:
                continue
            name = normalise_name(u.text)
            if name in known or (bound is None and len(a) == 1 and name not in CORE_TYPES):
                return False
    return True


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
        end = next((j for j, u in enumerate(rest) if u.text == ":="), len(rest))
        if colon is not None and rest[colon].text == ":":
            kind = rest[colon + 1 : end]
        else:  # no type written: the value's own ascription gives it (`let x := (⟨…⟩ : LT ℕ)`)
            kind = _ascribed_type(rest[end + 1 :])
        if name == "_" or name.startswith("inst") or (kind and class_like(kind)):
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


def class_like(kind: list[Token]) -> bool:
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
        instance = b.is_instance or (b.type and class_like(b.type))
        if instance and (why := closed_instance(b, bound)):
            out.append(_v("generated", b.at, why, offset))
        for n in b.names:
            if why := _shadows(n.text, mentioned, opened, known_name):
                out.append(_v("generated", n, why, offset))
            bound.add(normalise_name(n.text))
    return out


def look_alike_binders(c: Command, known: set[str]) -> list[tuple[Token, str, str]]:
    """The target's binders named with look-alike letters of a core name or of another of
    `known` (`(Νat : Type)`): (the name's token, the name, what it looks like). Both levels
    read them so (a model's block is refused, a person's context flagged)."""
    out = []
    stop = proof_start(c.body)
    for b in binder_groups(c.body[1:stop]):
        for n in b.names:
            name = normalise_name(n.text)
            like = look_alike_of(name, CORE_TYPES | (known - {name}))
            if like is not None:
                out.append((n, name, like))
    return out


def _look_alike_binders(c: Command, mentioned: set[str], offset: int) -> list[Violation]:
    """A binder of the target named with look-alike letters of a core name (`(Νat : Type)`)."""
    return [
        _v(
            "generated",
            n,
            f"the binder `{name}` looks like `{like}` (letters of another script)",
            offset,
        )
        for n, name, like in look_alike_binders(c, mentioned)
    ]


def closed_instance(b: Binder, bound: set[str]) -> str | None:
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
