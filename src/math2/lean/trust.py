"""Two trust levels for what stands before a target theorem.

- `GENERATED` (the default everywhere): a model's block. Besides the target it may only open
  namespaces, open and close sections and namespaces, declare universes, and declare `variable`s
  of binders that add no hypothesis. Any instance, definition, notation, attribute, option,
  `variable` of a proof or `include` is refused: in a model's output each of these can change
  what the statement means (`instance : LT ℕ := ⟨fun _ _ => True⟩`) and still compile, which is
  reward hacking. Formalize, eval, align and the RL reward check at this level.
- `BENCHMARK`: context written by people (a benchmark's definitions, helper lemmas with proofs,
  local notation). The allowlist of docs/lean.md applies, and what could change a statement's
  meaning is *flagged* (not refused): instances on core types, definitions that shadow or extend
  a library name, `include` of hypotheses. Flags travel with the item to reports and review.

Only the caller chooses the level; nothing in the data can.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from math2.lean.commands import Command
from math2.lean.lexer import Tok, Token
from math2.lean.rules import CORE_TYPES, DEFINITION_KEYWORDS, LIBRARY_NAMESPACES, normalise_name
from math2.lean.terms import Violation, _v


class ContextTrust(StrEnum):
    """Who wrote the context of an item."""

    BENCHMARK = "benchmark"  # people: allowlisted commands, meaning-changers flagged
    GENERATED = "generated"  # a model: target, `open`, `variable`s of types only


# Commands a model's block may hold besides its target.
_GENERATED_COMMANDS = frozenset(
    {"open", "namespace", "section", "end", "universe", "universes", "variable", "variables"}
)
# Tokens that make a binder's type a proposition (a hypothesis), not a type of objects.
_PROP_TOKENS = frozenset(
    {"=", "≠", "<", ">", "≤", "≥", "∣", "∀", "∃", "∃!", "↔", "∧", "∨", "¬", "∈", "∉",
     "⊆", "⊂", "⊇", "⊃", "≡", "False", "True", "Fact", "HEq", "Eq", "Ne"}
)  # fmt: skip
# Predicates whose application is a hypothesis (`(hp : p.Prime)`, `(h : Even n)`).
_PREDICATES = frozenset(
    {"Prime", "Even", "Odd", "IsUnit", "Squarefree", "Coprime", "Injective", "Surjective",
     "Bijective", "Continuous", "Differentiable", "Monotone", "StrictMono", "Antitone",
     "Nonempty", "Finite", "Infinite", "lt", "le", "Dvd"}
)  # fmt: skip


def generated_rules(commands: list[Command], targets: set[int], offset: int) -> list[Violation]:
    """The rules of a model's block (see the module docstring)."""
    out: list[Violation] = []
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword in ("set_option", "include"):
                out.append(_refuse(p.tokens[0], f"`{p.keyword} … in`", offset))
        for t in c.tokens:
            if t.text == "set_option":  # inside a term or tactic block too
                out.append(_refuse(t, "`set_option`", offset))
        if i in targets:
            continue
        if c.keyword in _GENERATED_COMMANDS:
            if c.keyword in ("variable", "variables"):
                out.extend(_variable_rules(c, offset))
            continue
        out.append(_refuse(c.tokens[c.keyword_index], f"`{c.keyword}`", offset))
    return out


def _refuse(t: Token, what: str, offset: int) -> Violation:
    return _v(
        "generated",
        t,
        f"{what} in a model's output: generated code may only hold the target theorem, `open` "
        "and `variable`s of types (an instance, definition, notation, option, "
        "hypothesis or `include` could change what the statement means)",
        offset,
    )


def _variable_rules(c: Command, offset: int) -> list[Violation]:
    """A `variable` of a model's block may not declare a hypothesis (a proof) or an instance
    that is one (`[Fact p.Prime]`)."""
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
    return []


def benchmark_flags(
    commands: list[Command],
    targets: set[int],
    full_names: dict[int, str],
    offset: int,
    known_name: Callable[[str], bool] | None = None,
) -> list[Violation]:
    """What a person's context does that could change the meaning of the target: flagged for the
    report and the review page, not refused. `known_name` answers whether a name is declared
    by the library at the pin (the scanner's table); without it, core type names and library
    namespaces are the guide."""
    out: list[Violation] = []
    for i, c in enumerate(commands):
        for p in c.prefixes:
            if p.keyword == "include":
                out.append(
                    _v("include", p.tokens[0], "`include` adds variables to the target", offset)
                )
        if i in targets:
            continue
        if c.keyword == "instance":
            core = sorted({t.text for t in c.body if t.kind is Tok.IDENT and t.text in CORE_TYPES})
            if core:
                out.append(
                    _v(
                        "core instance",
                        c.tokens[c.keyword_index],
                        f"an instance on {', '.join(core)} changes what statements about it mean",
                        offset,
                    )
                )
        elif c.keyword in ("variable", "variables"):
            for t in c.body:
                if t.text in ("False", "Fact"):
                    out.append(_v("hypothesis", t, "a variable that is a hypothesis", offset))
                    break
        full = full_names.get(i)
        if full and c.keyword in DEFINITION_KEYWORDS | {"theorem", "lemma"}:
            parts = full.split(".")
            why = None
            if known_name is not None and known_name(full):
                why = f"`{full}` is a name the library declares"
            elif parts[-1] in CORE_TYPES:
                why = f"`{full}` is named like the core type {parts[-1]}"
            elif len(parts) > 1 and parts[0] in LIBRARY_NAMESPACES:
                why = f"`{full}` is declared inside the library namespace {parts[0]}"
            if why:
                out.append(_v("shadowing", c.tokens[c.keyword_index], why, offset))
    return out
