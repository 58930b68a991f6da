"""Which declarations an item holds and which are its targets: full names under the enclosing
namespaces, the target theorem(s) of an item (the named parts, the named theorem, the only one,
or in a benchmark's context the last one, the others being helper lemmas), and each target's
name and proof."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from math2.lean.commands import Command
from math2.lean.lexer import Tok, Token
from math2.lean.rules import DEFINITION_KEYWORDS, THEOREM_KEYWORDS, normalise_name
from math2.lean.terms import Violation, _v
from math2.lean.trust import ContextTrust


class Strictness(StrEnum):
    """How much a check demands."""

    STATEMENT = "statement"  # one theorem, proof exactly `sorry`
    PROOF = "proof"  # one theorem, a proof without sorry
    RELAXED = "relaxed"  # any number of declarations; still nothing that runs code


def _proof_start(toks: list[Token]) -> int | None:
    """Index of the `:=` that begins the proof: the first at bracket depth 0 that does not
    belong to a `let`/`have`/`set`/`letI`/`haveI` inside the statement."""
    depth = 0
    pending = 0
    for j, t in enumerate(toks):
        if t.kind is Tok.SYMBOL and t.text in ("(", "[", "{", "⟨", "⦃", "@[", "‹"):
            depth += 1
        elif t.kind is Tok.SYMBOL and t.text in (")", "]", "}", "⟩", "⦄", "›"):
            depth = max(0, depth - 1)
        elif (
            depth == 0 and t.kind is Tok.IDENT and t.text in ("let", "letI", "have", "haveI", "set")
        ):
            pending += 1
        elif depth == 0 and t.kind is Tok.SYMBOL and t.text == ":=":
            if pending:
                pending -= 1
            else:
                return j
    return None


def _scope_names(commands: list[Command]) -> list[list[str]]:
    """The enclosing `namespace`s before each command (sections push nothing)."""
    out: list[list[str]] = []
    stack: list[str | None] = []
    for c in commands:
        out.append([p for p in stack if p])
        names = [t.text for t in c.body if t.kind is Tok.IDENT]
        if c.keyword == "namespace" and names:
            stack.append(normalise_name(names[0]))
        elif c.keyword == "section":
            stack.append(None)
        elif c.keyword == "end" and stack:
            stack.pop()
    return out


def _full(scope: list[str], declared: str) -> str:
    declared = declared.replace("«", "").replace("»", "")
    if declared.startswith("_root_."):
        return declared[len("_root_.") :]
    return ".".join([*scope, declared])


def _declared_names(commands: list[Command]) -> dict[int, str]:
    """The full name of every named declaration (anonymous instances have none)."""
    scopes = _scope_names(commands)
    out = {}
    for i, c in enumerate(commands):
        if c.keyword in DECLARING and c.body and c.body[0].kind is Tok.IDENT:
            out[i] = _full(scopes[i], c.body[0].text)
    return out


DECLARING = THEOREM_KEYWORDS | DEFINITION_KEYWORDS


def _pick_targets(
    commands: list[Command],
    full_names: dict[int, str],
    name: str | None,
    parts: Sequence[str],
    trust: ContextTrust,
) -> tuple[list[int], list[Violation]]:
    """Which theorems are the item's targets: the named parts, else the named theorem, else the
    only one; in a benchmark's context the last one (the others are helper lemmas)."""
    theorems = [i for i, c in enumerate(commands) if c.keyword in THEOREM_KEYWORDS]

    def named(n: str) -> list[int]:
        return [
            i
            for i in theorems
            if n in (full_names.get(i), normalise_name(commands[i].body[0].text))
        ]

    if parts:
        found, missing = [], []
        for p in parts:
            hit = named(p)
            (found.append(hit[-1]) if hit else missing.append(p))
        bad = [
            Violation(rule="name", line=None, detail=f"no theorem named {m!r} (a part)")
            for m in missing
        ]
        return sorted(set(found)), bad
    if name is not None and len(theorems) > 1:
        hit = named(name)
        if hit:
            return [hit[-1]], []
        detail = f"no theorem named {name!r} among {len(theorems)}"
        return [], [Violation(rule="name", line=None, detail=detail)]
    if len(theorems) == 1 or (theorems and trust is ContextTrust.BENCHMARK):
        return [theorems[-1]], []
    detail = f"expected exactly one theorem or lemma, found {len(theorems)}"
    return [], [Violation(rule="one theorem", line=None, detail=detail)]


def _target_rules(
    target: Command, toks: list[Token], name: str | None, strict: Strictness, offset: int
) -> tuple[list[Violation], int | None, str | None]:
    """(violations, index of the proof's `sorry` token, the name as written) for one target."""
    v: list[Violation] = []
    theorem_name = None
    decl = target.body[0] if target.body else None
    if decl is None or decl.kind is not Tok.IDENT:
        v.append(_v("name", target.tokens[0], "the theorem has no name", offset))
    else:
        theorem_name = normalise_name(decl.text)
    rest = target.body[1:]
    p = _proof_start(rest)
    sorry_at = None
    if p is None:
        v.append(_v("proof", target.tokens[0], "no `:=` before a proof", offset))
    elif strict is Strictness.STATEMENT:
        proof = rest[p + 1 :]
        words = [t.text for t in proof]
        if words not in (["sorry"], ["by", "sorry"]):
            shown = " ".join(words)[:60]
            v.append(_v("proof", rest[p], f"the proof must be `sorry`, found `{shown}`", offset))
        else:
            sorry_at = next(i for i, t in enumerate(toks) if t is proof[-1])
    return v, sorry_at, theorem_name
