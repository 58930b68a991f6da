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
- `include`, `hypothesis` (a `variable` of `False`/`Fact …`), and `clamped` (hygiene.py).
"""

from __future__ import annotations

from collections.abc import Callable

from math2.lean.binders import Binder, binder_groups
from math2.lean.brackets import depths, proof_start
from math2.lean.commands import Command
from math2.lean.lexer import Tok, Token
from math2.lean.names import has_look_alike, latin_skeleton, look_alike_of
from math2.lean.rules import CORE_TYPES, DEFINITION_KEYWORDS, LIBRARY_NAMESPACES, normalise_name
from math2.lean.targets import declaration_name
from math2.lean.terms import Violation, _v
from math2.lean.trust import (
    class_like,
    closed_instance,
    look_alike_binders,
    namespaces,
    statement_instances,
)

# Tokens Lean or Mathlib already has: a `local notation` of one of them alone redefines it.
NOTATION_TOKENS = CORE_TYPES | frozenset(
    {"π", "∑", "∏", "∫", "√", "‖", "∞", "⊤", "⊥", "∅", "∣", "≤", "<", "≥", ">", "+", "-", "*",
     "/", "^", "=", "≠", "•", "∘", "⁻¹", "!", "#", "⌊", "⌋", "⌈", "⌉", "|", "ℯ", "exp", "∈",
     "∉", "⊆", "∩", "∪", "ᶜ", "×", "→", "↔", "∧", "∨", "¬", "%", "∆", "ℵ₀", "𝓝", "i", "e"}
)  # fmt: skip
_INSTANCE_ATTRIBUTES = frozenset({"instance", "default_instance"})


def benchmark_flags(
    commands: list[Command],
    targets: set[int],
    full_names: dict[int, str],
    offset: int,
    known_name: Callable[[str], bool] | None = None,
) -> list[Violation]:
    """The flags of a person's context (see the module docstring)."""
    own = {n for n in full_names.values()} | {n.split(".")[-1] for n in full_names.values()}
    aliases = _aliases(commands, full_names)
    attributes = any(c.keyword == "attribute" for c in commands)
    signatures = _signatures(commands, full_names) if attributes else {}
    used_later = _identifiers_after(commands)
    every = {
        normalise_name(t.text) if "«" in t.text or "_root_" in t.text else t.text
        for c in commands
        for t in c.tokens
        if t.kind is Tok.IDENT
    }
    out: list[Violation] = []
    bound: set[str] = set()  # the variables the context binds so far
    opened = namespaces(commands)  # where a variable's name may shadow a library name
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword == "include":
                out.append(
                    _v("include", p.tokens[0], "`include` adds variables to the target", offset)
                )
        if i in targets:
            out.extend(_statement_instance_flags(c, offset))
            if any(j > i for j in targets):  # a part that is an instance: later parts use it
                out.extend(_instance_flags(c, own, aliases, signatures, known_name, offset))
        if i not in targets:
            out.extend(_instance_flags(c, own, aliases, signatures, known_name, offset))
            if c.keyword in ("variable", "variables"):
                out.extend(_variable_instance_flags(c, bound, aliases, offset))
            out.extend(_notation_flags(c, used_later.get(i, set()), known_name, offset))
            if c.keyword in ("variable", "variables"):
                for t in c.body:
                    if t.text in ("False", "Fact"):
                        out.append(_v("hypothesis", t, "a variable that is a hypothesis", offset))
                        break
            out.extend(_name_flags(c, i, full_names, every, known_name, offset, opened))
        elif any(t.kind is Tok.IDENT and has_look_alike(t.text) for t in c.tokens):
            out.extend(_look_alike_binders(c, every, offset))
    return out


def _variable_instance_flags(
    c: Command, bound: set[str], aliases: dict[str, set[str]], offset: int
) -> list[Violation]:
    """A `variable` instance binder none of whose class arguments is a variable bound before it
    (`[Fintype ℕ]`, `[LT (Fin n)]`): a local instance every theorem that can use it assumes."""
    out = []
    for b in binder_groups(c.body):
        instance = b.is_instance or (b.type and class_like(b.type))
        if instance and closed_instance(b, bound):
            shown = " ".join(t.text for t in b.type)[:60]
            names = {normalise_name(t.text) for t in b.type if t.kind is Tok.IDENT}
            core = sorted(names & CORE_TYPES) + sorted(
                f"{n} (an alias of {', '.join(sorted(aliases[n]))})" for n in names & set(aliases)
            )
            rule, on = ("core instance", f" on {', '.join(core)}") if core else ("instance", "")
            why = (
                f"`variable [{shown}]`: an instance binder{on} none of whose class's arguments "
                "is a variable of the context: a local instance every theorem that can use it "
                "assumes"
            )
            out.append(_v(rule, b.at, why, offset))
        bound.update(normalise_name(n.text) for n in b.names)
    return out


def _statement_instance_flags(c: Command, offset: int) -> list[Violation]:
    """An instance made inside the target's own type (`letI`, `haveI`, `inferInstanceAs`, a
    `let`/`have` of a class): it changes what the rest of the statement's operations mean."""
    tail = " inside the statement: an instance it makes itself changes what its operations mean"
    return [
        v.model_copy(
            update={"rule": "instance", "detail": v.detail.split(" in a model's output")[0] + tail}
        )
        for v in statement_instances(c, offset)
    ]


def _aliases(commands: list[Command], full_names: dict[int, str]) -> dict[str, set[str]]:
    """Names the item defines as another name for core types (`abbrev N := ℕ`): name → the
    core types its body names."""
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
        core = {n for n in value if n in CORE_TYPES}
        core |= {x for n in value for x in out.get(n, set())}
        if core:
            full = full_names[i]
            out[full] = core
            out[full.split(".")[-1]] = core
    return out


def _signatures(commands: list[Command], full_names: dict[int, str]) -> dict[str, list[str]]:
    """The identifiers of each named declaration's type (before its `:=`), by full and short
    name."""
    out: dict[str, list[str]] = {}
    for i, c in enumerate(commands):
        if i in full_names:
            out[full_names[i]] = out[full_names[i].split(".")[-1]] = _subjects(c.body[1:])
    return out


def _subjects(decl: list[Token]) -> list[str]:
    """What an instance declared with this signature is on: the head of each argument of its
    class (`LinearOrder (Polynomial ℚ)` → Polynomial; `LT N` → N)."""
    stop = proof_start(decl)
    sig = decl[:stop]
    level = depths(sig)
    colon = next((k for k, t in enumerate(sig) if t.text == ":" and not level[k]), -1)
    kind = sig[colon + 1 :]
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
    known_name: Callable[[str], bool] | None,
    offset: int,
) -> list[Violation]:
    """An instance made by keyword or attribute, with what it is on (for an attribute on a
    declaration of the item: what that declaration's type is about)."""
    how = None
    if c.keyword == "instance":
        how = "an instance"
    elif any(_instance_attribute(a) for a in c.attributes):
        how = "`@[instance]` on a declaration: an instance"
    elif c.keyword == "attribute" and _instance_attribute(c.body):
        word = next(t.text for t in c.body if t.text in _INSTANCE_ATTRIBUTES)
        removed = "-" if any(t.text == "-" for t in c.body[:4]) else ""
        local = "local " if any(t.text == "local" for t in c.body[:4]) else ""
        how = f"`attribute [{local}{removed}{word}]`: a change to instance resolution"
    if how is None:
        return []
    at = c.tokens[c.keyword_index]
    if c.keyword == "attribute":
        names = [normalise_name(t.text) for t in c.body if t.kind is Tok.IDENT]
        names = [x for n in names for x in signatures.get(n, [n])]
    else:  # a declaration: what its type is about, not its body
        names = _subjects(c.body)
    core = sorted({n for n in names if n in CORE_TYPES})
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
            and (
                (known_name is not None and known_name(n)) or n.split(".")[0] in LIBRARY_NAMESPACES
            )
        }
    )
    if library:
        why = f"{how} on the library's {', '.join(library)} changes what statements about it mean"
        return [_v("instance", at, why, offset)]
    mine = sorted({n for n in names if n in own})
    if mine:
        why = f"{how} on {', '.join(mine)}, which the item declares"
        return [_v("instance", at, why, offset)]
    return [_v("instance", at, f"{how} for the target", offset)]


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
    c: Command, later: set[str], known_name: Callable[[str], bool] | None, offset: int
) -> list[Violation]:
    """A `local notation` whose only part is a token Lean or the library has, used later."""
    if c.keyword not in ("notation", "notation3"):
        return []
    arrow = next((k for k, t in enumerate(c.body) if t.text == "=>"), len(c.body))
    pattern = [t for t in c.body[:arrow] if t.text not in (":", "(") and t.kind is not Tok.NUMBER]
    atoms = [t.text[1:-1].strip() for t in pattern if t.kind is Tok.STRING]
    if len(atoms) != 1 or len(pattern) != 1:
        return []
    atom = atoms[0]
    existing = atom in NOTATION_TOKENS or (known_name is not None and known_name(atom))
    if existing and atom in later:
        why = f'`{c.keyword} "{atom}"` redefines `{atom}`, which the statement uses'
        return [_v("notation", c.tokens[c.keyword_index], why, offset)]
    return []


def _name_flags(
    c: Command,
    i: int,
    full_names: dict[int, str],
    every: set[str],
    known_name: Callable[[str], bool] | None,
    offset: int,
    opened: list[str] = [],  # noqa: B006 (read only)
) -> list[Violation]:
    """Declarations and variables named like (or looking like) a library or core name (a
    variable: under the namespaces the item opens or enters too, `sqrt` after `open Real`)."""
    out: list[Violation] = []
    at = c.tokens[c.keyword_index]
    full = full_names.get(i)
    declared: list[tuple[str, Token]] = []
    if full and c.keyword in DEFINITION_KEYWORDS | {"theorem", "lemma"}:
        t = declaration_name(c)
        declared.append((full, t or at))
        parts = full.split(".")
        written = normalise_name(t.text) if t is not None else full
        why = None
        if known_name is not None and (known_name(full) or known_name(written)):
            why = f"`{full}` is a name the library declares"
        elif parts[-1] in CORE_TYPES:
            why = f"`{full}` is named like the core type {parts[-1]}"
        elif len(parts) > 1 and parts[0] in LIBRARY_NAMESPACES:
            why = f"`{full}` is declared inside the library namespace {parts[0]}"
        if why:
            out.append(_v("shadowing", at, why, offset))
    elif c.keyword in ("variable", "variables"):
        for t in c.body:
            if t.kind is Tok.IDENT and t.text not in ("Type", "Sort", "Prop"):
                declared.append((normalise_name(t.text), t))
                name = normalise_name(t.text)
                library = None
                if known_name is not None and len(name) > 1:
                    library = next(
                        (f for f in [name, *(f"{ns}.{name}" for ns in opened)] if known_name(f)),
                        None,
                    )
                if (name in CORE_TYPES or library) and _binds(c, t):
                    why = f"the variable `{name}` is named like the library's `{library or name}`"
                    out.append(_v("shadowing", t, why, offset))
    for name, t in declared:
        like = look_alike_of(name.split(".")[-1], CORE_TYPES | every)
        lib = None
        if like is None and known_name is not None:
            skeleton = latin_skeleton(name)
            lib = skeleton if skeleton != name and known_name(skeleton) else None
        if like or lib:
            why = f"`{name}` is spelled with letters of another script and reads as `{like or lib}`"
            out.append(_v("look-alike", t, why, offset))
    return out


def _look_alike_binders(c: Command, every: set[str], offset: int) -> list[Violation]:
    """A binder of a target named with look-alike letters of a core or another name."""
    return [
        _v(
            "look-alike",
            n,
            f"`{name}` is spelled with letters of another script and reads as `{like}`",
            offset,
        )
        for n, name, like in look_alike_binders(c, every)
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
