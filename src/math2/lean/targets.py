"""Which declarations an item holds and which are its targets: full names under the enclosing
namespaces, the target theorem(s) of an item (the named parts, the named theorem, the only one,
or in a benchmark's context the last one, the others being helper lemmas), and each target's
name and proof."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from math2.lean.brackets import proof_start
from math2.lean.commands import Command, scope_names
from math2.lean.lexer import Tok, Token
from math2.lean.names import canonical, printed, same
from math2.lean.names import parts as name_parts
from math2.lean.rules import DEFINITION_KEYWORDS, THEOREM_KEYWORDS
from math2.lean.terms import Violation, _v
from math2.lean.trust import ContextTrust


class Strictness(StrEnum):
    """How much a check demands."""

    STATEMENT = "statement"  # one theorem, proof exactly `sorry`
    PROOF = "proof"  # one theorem, a proof without sorry
    RELAXED = "relaxed"  # any number of declarations; still nothing that runs code


def _full(scope: list[str], declared: str) -> str:
    """A declaration's full name, as Lean prints it: under the enclosing namespaces unless
    written with `_root_.`."""
    p = name_parts(declared)
    if p and p[0] == "_root_":
        return printed([x for x in p if x != "_root_"] or [""])
    return printed([*scope, *p])


def declaration_name(c: Command) -> Token | None:
    """The name token of a declaring command (None: anonymous, as `instance : C` is)."""
    body = c.body
    if c.keyword == "class" and body and body[0].text == "inductive":  # `class inductive K`
        body = body[1:]
    if c.keyword == "instance" and body and body[0].text == "(":  # `(priority := n)`
        close = next((k for k, t in enumerate(body) if t.text == ")"), None)
        body = body[close + 1 :] if close is not None else body
    if not body or body[0].kind is not Tok.IDENT:
        return None
    return body[0]


def _declared_names(commands: list[Command]) -> dict[int, str]:
    """The full name of every named declaration (anonymous instances have none)."""
    scopes = scope_names(commands)
    out = {}
    for i, c in enumerate(commands):
        if c.keyword in DECLARING and (t := declaration_name(c)) is not None:
            out[i] = _full(scopes[i], t.text)
    return out


DECLARING = THEOREM_KEYWORDS | DEFINITION_KEYWORDS


def _pick_targets(
    commands: list[Command],
    full_names: dict[int, str],
    name: str | None,
    parts: Sequence[str],
    trust: ContextTrust,
) -> tuple[list[int], list[Violation]]:
    """Which declarations are the item's targets: the named parts, else the named theorem (or
    instance), else the only theorem; in a benchmark's context the last one (the others are
    helper lemmas); an item without a theorem may have one instance as its target."""
    theorems = [i for i, c in enumerate(commands) if c.keyword in THEOREM_KEYWORDS]
    # An instance is a target only in a person's context (a model's block states theorems).
    instances = [
        i
        for i, c in enumerate(commands)
        if c.keyword == "instance" and trust is ContextTrust.BENCHMARK
    ]

    def named(n: str) -> list[int]:
        out = []
        for i in sorted(theorems + instances):
            t = declaration_name(commands[i])
            if t is not None and (same(n, full_names.get(i)) or same(n, t.text)):
                out.append(i)
        return out

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
    if name is not None and (len(theorems) > 1 or (not theorems and instances)):
        hit = named(name)
        if hit:
            return [hit[-1]], []
        if theorems or len(instances) != 1:
            detail = f"no theorem named {name!r} among {len(theorems)}"
            return [], [Violation(rule="name", line=None, detail=detail)]
    if len(theorems) == 1 or (theorems and trust is ContextTrust.BENCHMARK):
        return [theorems[-1]], []
    if not theorems and len(instances) == 1:
        return instances, []
    detail = f"expected exactly one theorem or lemma, found {len(theorems)}"
    return [], [Violation(rule="one theorem", line=None, detail=detail)]


def _target_rules(
    target: Command, toks: list[Token], name: str | None, strict: Strictness, offset: int
) -> tuple[list[Violation], int | None, str | None]:
    """(violations, index of the proof's `sorry` token, the name as written) for one target;
    an instance may be anonymous (its name is then None)."""
    v: list[Violation] = []
    theorem_name = None
    decl = declaration_name(target)
    if decl is not None:
        theorem_name = canonical(decl.text)
    elif target.keyword != "instance":
        v.append(_v("name", target.tokens[0], "the theorem has no name", offset))
    rest = target.body[target.body.index(decl) + 1 :] if decl is not None else target.body
    p = proof_start(rest)
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


def unlabelled_parts(commands: list[Command], targets: list[int]) -> list[int]:
    """A person's item of several theorems whose proofs are each only `sorry`, picked by its
    last one and labelled with no parts (`theorem_names`): all of them, as its parts (the
    caller flags it); [] for any other item."""
    theorems = [i for i, c in enumerate(commands) if c.keyword in THEOREM_KEYWORDS]
    if len(theorems) < 2 or targets != theorems[-1:]:
        return []
    for i in theorems:
        body = commands[i].body
        stop = proof_start(body)
        proof = [t.text for t in body[stop + 1 :]] if stop is not None else []
        if proof not in (["sorry"], ["by", "sorry"]):
            return []
    return theorems
