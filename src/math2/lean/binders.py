"""Binder groups over the lexer's tokens: `(x y : ℝ)`, `{G : Type*}`, `⦃a : α⦄`, `[Group G]`,
`[inst : Module R M]`. Read by the statement reader (a declaration's binders), hygiene (what a
`variable` of a model's block binds) and the lints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from math2.lean.brackets import closes, depths, matching, opens
from math2.lean.lexer import Tok, Token

BINDER_BRACKETS = frozenset({"(", "{", "[", "⦃", "{{"})


@dataclass
class Binder:
    """One bracketed binder group."""

    bracket: str  # ( { [ ⦃
    names: list[Token]  # the names it binds (none for an anonymous instance `[Group G]`)
    type: list[Token]  # the tokens of its type (after `:`, or the whole of `[C args]`)
    at: Token  # its opening bracket

    @property
    def is_instance(self) -> bool:
        return self.bracket == "["

    @property
    def head(self) -> str | None:
        """The first identifier of the type (`Module` in `Module R M`)."""
        return next((t.text for t in self.type if t.kind is Tok.IDENT), None)

    def arguments(self) -> list[list[Token]]:
        """The type's top-level arguments after its head (`R`, `M` of `Module R M`; `(Fin n)`
        stays one argument)."""
        toks = self.type
        start = next((k for k, t in enumerate(toks) if t.kind is Tok.IDENT), None)
        if start is None:
            return []
        out: list[list[Token]] = []
        k = start + 1
        while k < len(toks):
            if opens(toks[k]):
                close = matching(toks, k)
                end = len(toks) - 1 if close is None else close
                out.append(list(toks[k : end + 1]))
                k = end + 1
            else:
                out.append([toks[k]])
                k += 1
        return out


def binder_groups(toks: Sequence[Token]) -> list[Binder]:
    """The bracketed binder groups at the top level of `toks`, in order (other tokens, such as
    a declaration's `:` and type, are skipped)."""
    out: list[Binder] = []
    level = depths(toks)
    k = 0
    while k < len(toks):
        t = toks[k]
        if level[k] == 0 and t.kind is Tok.SYMBOL and t.text in BINDER_BRACKETS:
            close = matching(toks, k)
            end = len(toks) if close is None else close
            out.append(binder_of(t, list(toks[k + 1 : end])))
            k = end + 1
        elif level[k] == 0 and t.text == ":":
            break  # the declaration's own type: no binders after it
        else:
            k += 1
    return out


def binder_of(at: Token, inner: list[Token]) -> Binder:
    """One binder group from its tokens inside the brackets (`x y : T`, `Group G`), opened at
    `at` (a bracket, or the `∃`/`fun` of a group written without brackets)."""
    level = depths(inner)
    colon = next((j for j, t in enumerate(inner) if t.text == ":" and level[j] == 0), None)
    if colon is None:
        if at.text == "[":
            return Binder(at.text, [], inner, at)
        return Binder(at.text, [t for t in inner if t.kind is Tok.IDENT], [], at)
    names = [t for t in inner[:colon] if t.kind is Tok.IDENT]
    kind = inner[colon + 1 :]
    if any(closes(t) for t in inner[:colon]):  # not a plain list of names
        names = []
    return Binder(at.text, names, kind, at)
