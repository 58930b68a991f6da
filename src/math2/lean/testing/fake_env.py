"""The fake REPL's model of a Lean environment: declarations one by one.

Each declaring command of a REPL command (`theorem`, `lemma`, `def`, `abbrev`, `instance`,
`structure`, `class`, `class inductive`, `inductive`, `axiom`, `opaque`, `example`) becomes a
`Decl` with its full name (under the enclosing namespaces, printed as Lean prints names), where its
name stands, its signature as written, whether its own text holds `sorry`, and the names it
mentions. Its axioms are what Lean would report for what this models: the three standard axioms
(every declaration here is taken to use them, as Mathlib's tactics and types do), `sorryAx`
only when its own text holds `sorry` or it mentions a declaration that depends on it, an
`axiom` it mentions, and the axioms of the library constants it mentions. A `structure`/`class`
also declares `Name.mk`, an `inductive` its constructors. Read with math2's lexer and command
splitter; names are printed by `math2.lean.names`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from math2.lean.brackets import depths, proof_start
from math2.lean.commands import Command, scope_names, split_commands
from math2.lean.lexer import Tok, tokenize
from math2.lean.names import canonical, parts, printed
from math2.lean.rules import SORRY_WORDS
from math2.lean.targets import declaration_name

STANDARD = ("propext", "Classical.choice", "Quot.sound")
KINDS = frozenset(
    {"theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive",
     "axiom", "opaque", "example"}
)  # fmt: skip


@dataclass
class Decl:
    """One declaration of a command."""

    name: str  # full name, printed (`_example` for an example, `_instance` if anonymous)
    kind: str
    line: int  # 1-based, in the command
    column: int
    signature: str  # as written, whitespace collapsed, without the leading `:`
    own_sorry: bool
    mentions: list[str] = field(default_factory=list)  # identifiers, each resolved later
    scope: list[str] = field(default_factory=list)
    axioms: set[str] = field(default_factory=set)
    extra_names: list[str] = field(default_factory=list)  # constructors it also declares


def declarations(cmd: str) -> list[Decl]:
    """The declarations of a command, in order (none if it does not lex)."""
    try:
        toks = [t for t in tokenize(cmd) if t.kind is not Tok.DOC]
    except ValueError:
        return []
    commands = split_commands(toks)
    scopes = scope_names(commands)
    out = []
    for c, scope in zip(commands, scopes, strict=True):
        kw = "class" if c.keyword == "class" and _is_class_inductive(c) else c.keyword
        if kw not in KINDS:
            continue
        out.append(_decl(cmd, c, kw, scope))
    return out


def _is_class_inductive(c: Command) -> bool:
    return bool(c.body) and c.body[0].text == "inductive"


def _decl(cmd: str, c: Command, kw: str, scope: list[str]) -> Decl:
    body = c.body[1:] if _is_class_inductive(c) else c.body
    named = declaration_name(c) if kw != "class" or not _is_class_inductive(c) else None
    if named is None and body and body[0].kind is Tok.IDENT and kw != "instance":
        named = body[0]
    if named is not None:
        p = parts(named.text)
        full = printed([x for x in p if x != "_root_"] if p[0] == "_root_" else [*scope, *p])
        at = named
        rest = body[body.index(named) + 1 :]
    else:
        full = "_example" if kw == "example" else "_instance"
        at = c.tokens[c.keyword_index]
        rest = body
    stop = proof_start(rest)
    sig_toks = rest[:stop] if stop is not None else rest
    if kw in ("structure", "class", "inductive"):  # the signature ends at `where`/`|`/`:=`
        cut = next((k for k, t in enumerate(rest) if t.text in ("where", "|", ":=")), len(rest))
        sig_toks = rest[:cut]
    signature = ""
    if sig_toks:
        last = sig_toks[-1]
        text = cmd[sig_toks[0].offset : last.offset + len(last.text)]
        signature = " ".join(text.split()).removeprefix(": ")
    decl = Decl(
        name=full,
        kind=kw,
        line=at.line,
        column=at.col,
        signature=signature,
        own_sorry=any(t.kind is Tok.IDENT and t.text in SORRY_WORDS for t in rest),
        mentions=[t.text for t in rest if t.kind is Tok.IDENT],
        scope=scope,
    )
    if kw in ("structure", "class"):
        decl.extra_names.append(printed([*parts(full), "mk"]))
    elif kw == "inductive":
        level = depths(rest)
        for k, t in enumerate(rest[:-1]):
            if t.text == "|" and level[k] == 0 and rest[k + 1].kind is Tok.IDENT:
                decl.extra_names.append(printed([*parts(full), *parts(rest[k + 1].text)]))
    return decl


def scope_at(cmd: str, offset: int) -> list[str]:
    """The namespaces open at a character offset of a command (`#check @X` after a block that
    leaves `namespace Foo` open is read inside Foo, as Lean reads it)."""
    try:
        toks = [t for t in tokenize(cmd) if t.kind is not Tok.DOC]
    except ValueError:
        return []
    commands = split_commands(toks)
    scope: list[str] = []
    for c, names in zip(commands, scope_names(commands), strict=True):
        if c.tokens and c.tokens[0].offset > offset:
            break
        scope = names
    return scope


def resolve(name: str, scope: list[str], known: Mapping[str, object]) -> str | None:
    """The declaration a name written inside `scope` refers to, as Lean looks it up: the
    innermost namespace first, then the outer ones, then as written."""
    p = parts(name)
    if p[0] == "_root_":
        full = canonical(name)
        return full if full in known else None
    for k in range(len(scope), -1, -1):
        full = printed([*scope[:k], *p])
        if full in known:
            return full
    return None


def settle(
    decls: list[Decl],
    known: dict[str, set[str]],
    env_axioms: set[str],
    per_decl: Mapping[str, set[str]],
) -> None:
    """Fill each declaration's axioms, in order, and add it (and its constructors) to `known`
    (full name → axioms: the environment so far, the library included)."""
    for d in decls:
        if d.kind == "axiom":
            d.axioms = {d.name}
        else:
            d.axioms = set(STANDARD) | env_axioms | set(per_decl.get(d.name, set()))
            if d.own_sorry:
                d.axioms.add("sorryAx")
            for m in d.mentions:
                hit = resolve(m, d.scope, known)
                if hit is not None and hit != d.name:
                    d.axioms |= known[hit]
        known[d.name] = d.axioms
        for extra in d.extra_names:
            known[extra] = d.axioms


# The messages the doubles answer with, in the wording of Lean ≤ 4.9 (`old`) and ≥ 4.19 (`new`).
_MISMATCH = "{t} mismatch\n  {{n}}\nhas type\n  ℕ : Type\nbut is expected to have type\n  ℝ : Type"
_HEARTBEATS = "maximum number of heartbeats (200000) has been reached"
WORDING = {
    "old": {
        "unknown_identifier": "unknown identifier '{n}'",
        "unknown_constant": "unknown constant '{n}'",
        "type_mismatch": _MISMATCH.format(t="type"),
        "synth_instance": "failed to synthesize instance\n  {n} ℕ",
        "unsolved_goals": "unsolved goals\n⊢ {n}",
        "parse_error": "unexpected token '{n}'; expected term",
        "heartbeat": f"(deterministic) timeout at whnf, {_HEARTBEATS} "
        "(use 'set_option maxHeartbeats <num>' to set the limit)",
        "rewrite_failed": "tactic 'rewrite' failed, did not find instance of the pattern in the "
        "target expression\n  {n}\n⊢ True",
        "motive": "tactic 'rewrite' failed, motive is not type correct\n  fun _a => {n}\n⊢ True",
        "function_expected": "function expected\n  {n}\nterm has type\n  ℕ",
    },
    "new": {
        "unknown_identifier": "Unknown identifier `{n}`",
        "unknown_constant": "Unknown constant `{n}`",
        "type_mismatch": _MISMATCH.format(t="Type"),
        "synth_instance": "failed to synthesize\n  {n} ℕ\n\nHint: Additional diagnostic "
        "information may be available using the `set_option diagnostics true` command.",
        "unsolved_goals": "unsolved goals\n⊢ {n}",
        "parse_error": "unexpected token '{n}'; expected term",
        "heartbeat": f"(deterministic) timeout at `whnf`, {_HEARTBEATS}\n\n"
        "Note: Use `set_option maxHeartbeats <num>` to set the limit.",
        "rewrite_failed": "Tactic `rewrite` failed: Did not find an instance of the pattern in "
        "the target expression\n  {n}\n\n⊢ True",
        "motive": "Tactic `rewrite` failed: motive is not type correct:\n  fun _a => {n}\n\n⊢ True",
        "function_expected": "Function expected at\n  {n}\nbut this term has type\n  ℕ",
    },
}
