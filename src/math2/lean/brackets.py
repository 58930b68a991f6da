"""Brackets over the lexer's tokens: the one place math2 counts nesting in Lean code.

`depths` (the depth before each token), `matching` (the token that closes a bracket),
`top_level` (tokens at depth 0), `proof_start` (the `:=` that ends a statement: the first at
depth 0 that does not close a `let`, `letI`, `have`, `haveI` or `set` of the statement itself).
Comments and strings never count: they are not tokens. The command splitter, hygiene, the
statement reader and every caller outside `math2.lean` (the lints, retrieval's shapes, the
datasets) read nesting through these.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from math2.lean.lexer import Tok, Token

OPEN = frozenset({"(", "[", "{", "⟨", "@[", "⦃", "‹", "⁅", "⟪", "⟦", "%["})
CLOSE = frozenset({")", "]", "}", "⟩", "⦄", "›", "⁆", "⟫", "⟧"})
# Words of a statement whose own `:=` is part of the statement (`let x := 1; x = 1`).
BINDING_WORDS = frozenset({"let", "letI", "have", "haveI", "set"})


def opens(t: Token) -> bool:
    """Whether a token opens a bracket (only a symbol's text can be one)."""
    return t.text in OPEN


def closes(t: Token) -> bool:
    """Whether a token closes a bracket."""
    return t.text in CLOSE


def depths(toks: Sequence[Token]) -> list[int]:
    """The bracket depth before each token (a close without its open never goes below 0).
    (Only a symbol's text can be a bracket: strings and characters keep their quotes.)"""
    out = []
    depth = 0
    for t in toks:
        out.append(depth)
        text = t.text
        if text in OPEN:
            depth += 1
        elif text in CLOSE and depth:
            depth -= 1
    return out


def matching(toks: Sequence[Token], i: int) -> int | None:
    """The index of the token that closes the bracket opened at i (None: it never closes)."""
    depth = 0
    for j in range(i, len(toks)):
        if opens(toks[j]):
            depth += 1
        elif closes(toks[j]):
            depth -= 1
            if depth == 0:
                return j
    return None


def top_level(toks: Sequence[Token], texts: Collection[str]) -> list[int]:
    """The indexes of the tokens whose text is in `texts`, outside every bracket."""
    level = depths(toks)
    return [k for k, t in enumerate(toks) if level[k] == 0 and t.text in texts]


def proof_start(toks: Sequence[Token]) -> int | None:
    """The index of the `:=` that begins the proof (or a definition's body): the first at depth 0
    that does not close a `let`/`letI`/`have`/`haveI`/`set` of the statement. None: no proof."""
    pending = depth = 0  # one pass, the depth kept as `depths` keeps it (hygiene's hot path)
    for j, t in enumerate(toks):
        text = t.text
        if depth == 0:
            if t.kind is Tok.IDENT and text in BINDING_WORDS:
                pending += 1
            elif t.kind is Tok.SYMBOL and text == ":=":
                if pending:
                    pending -= 1
                else:
                    return j
        if text in OPEN:
            depth += 1
        elif text in CLOSE and depth:
            depth -= 1
    return None


def balanced(toks: Sequence[Token]) -> bool:
    """Whether every bracket closes and none closes unopened."""
    depth = 0
    for t in toks:
        if opens(t):
            depth += 1
        elif closes(t):
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
