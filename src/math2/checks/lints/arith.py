"""`lint.nat_arith`: truncated ℕ subtraction and floor ℕ division where the text means more."""

from __future__ import annotations

import re

from math2.checks.base import register
from math2.checks.lints.common import (
    Lint,
    close_bracket,
    norm_relation,
    numeral,
    relation,
    split_top,
)
from math2.checks.statement import Statement, strip_parens, texts
from math2.lean.brackets import depths, opens
from math2.lean.lexer import Tok, Token

_WIDE = re.compile(
    r"\b(real|reals|rational|rationals|fraction|fractions|negative|integers?)\b"
    r"|\\mathbb\s*\{?\s*[RQZ]\b|[ℝℚℤ]",
    re.I,
)
_NARROW = re.compile(r"\b(positive|non-?negative|natural)\s+(integers?|numbers?)\b", re.I)
_NAT = {"ℕ", "Nat", "ℕ+", "PNat"}
_CASTS = {"ℝ", "ℤ", "ℚ", "ℂ", "Real", "Int", "Rat", "Complex"}


@register("lint.nat_arith")
class NatArith(Lint):
    declared_status = "fail"  # before it was measured it failed pairs

    def judge(self, st: Statement, informal: str) -> list[str]:
        cue = _wide_cue(informal)
        nat = {n for n, b in st.variables.items() if len(b.type) == 1 and b.type[0].text in _NAT}
        out = []
        exprs = [("goal", st.goal)] + [(n, b.type) for n, b in st.hypotheses]
        for where, toks in exprs:
            for k, t in enumerate(toks):
                if t.kind is not Tok.SYMBOL or t.text not in {"-", "/"}:
                    continue
                left = toks[k - 1] if k else None
                right = toks[k + 1] if k + 1 < len(toks) else None
                sides = [x for x in (left, right) if x is not None]
                if _numeral_exponent(toks, k):
                    out.append(
                        f"ℕ division `{left.text} / {right.text}` of numerals in an exponent"
                        " (floor division: the exponent is a natural number)"
                    )
                    continue
                if not cue or not nat:
                    continue
                if (
                    not sides
                    or not all(x.text in nat or x.kind is Tok.NUMBER for x in sides)
                    or all(x.kind is Tok.NUMBER for x in sides)
                ):
                    continue
                if _cast_around(toks, k) or _guarded(st, t.text, left, right, toks):
                    continue
                op = "subtraction" if t.text == "-" else "division"
                out.append(
                    f"ℕ {op} `{' '.join(x.text for x in (left, t, right) if x)}` in {where}"
                    f" while the text says {cue!r}"
                )
        return out


def _numeral_exponent(toks: list[Token], k: int) -> bool:
    """`x ^ (a / b)` with numerals a, b that b does not divide: ℕ division in an exponent."""
    if not (k >= 2 and k + 2 < len(toks) + 1):
        return False
    left, right = toks[k - 1], toks[k + 1] if k + 1 < len(toks) else None
    if right is None or left.kind is not Tok.NUMBER or right.kind is not Tok.NUMBER:
        return False
    if k < 3 or toks[k - 2].text != "(" or toks[k - 3].text != "^":
        return False
    if k + 2 < len(toks) and toks[k + 2].text != ")":
        return False  # a longer expression or an ascription `(1 / 3 : ℝ)`
    a, b = numeral(left.text), numeral(right.text)
    return a is not None and b is not None and b != 0 and a % b != 0


def _wide_cue(informal: str) -> str:
    text = _NARROW.sub(" ", informal)
    m = _WIDE.search(text)
    return m.group(0) if m else ""


def _cast_around(toks: list[Token], k: int) -> bool:
    """Whether the operation at k sits in a group with a cast or a non-ℕ type ascription."""
    level = depths(toks)
    need = level[k] if k < len(toks) else 0
    for lo in range(k - 1, -1, -1):  # each enclosing bracket, innermost first (math2.lean)
        if not (opens(toks[lo]) and level[lo] == need - 1):
            continue
        need -= 1
        if lo and toks[lo - 1].text.startswith(("Real.", "Complex.")):
            return True  # the argument of a real function is real
        hi = close_bracket(toks, lo)
        inner = texts(toks[lo + 1 : hi])
        if "↑" in inner or any(
            inner[j] == ":" and j + 1 < len(inner) and inner[j + 1] in _CASTS
            for j in range(len(inner))
        ):
            return True
    return "↑" in texts(toks[max(0, k - 2) : k + 3])


def _facts(st: Statement) -> set[tuple[str, str, str]]:
    """Normalised comparisons the hypotheses state (conjunctions split)."""
    out = set()
    for _, b in st.hypotheses:
        for part in split_top(strip_parens(b.type), "∧"):
            r = relation(part)
            if r:
                out.add(norm_relation(r))
    return out


def _guarded(
    st: Statement, op: str, left: Token | None, right: Token | None, toks: list[Token]
) -> bool:
    """Whether a hypothesis rules out truncation of `left - right` (`right ≤ left`, …)."""
    if op != "-" or left is None or right is None:
        return False
    facts = _facts(st)
    a, b = left.text, right.text
    if (b, "≤", a) in facts or (b, "<", a) in facts:
        return True
    nb = numeral(b) if right.kind is Tok.NUMBER else None
    na = numeral(a) if left.kind is Tok.NUMBER else None
    for x, r, y in facts:
        lo = numeral(x) if nb is not None and y == a else None
        if lo is not None and ((r == "≤" and lo >= nb) or (r == "<" and lo >= nb - 1)):
            return True  # c ≤ x, then x - c does not truncate
        hi = numeral(y) if na is not None and x == b else None
        if hi is not None and ((r == "≤" and hi <= na) or (r == "<" and hi <= na + 1)):
            return True  # x < d ≤ c, then c - x does not truncate
    # `x - y = k` with k > 0 forces x ≥ y + k
    rel = relation(toks)
    if rel and rel[1] == "=" and f"{a} - {b}" in {rel[0], rel[2]}:
        other = rel[2] if rel[0] == f"{a} - {b}" else rel[0]
        k = numeral(other)
        if k is not None and k > 0:
            return True
    return False
