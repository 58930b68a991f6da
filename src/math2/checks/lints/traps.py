"""Lints for the traps people make when formalizing (each measured on the labelled dev set;
under 90 % precision a lint only warns — `declared_status` is "warn" until measured).

- `lint.missing_positivity`: the text says positive, nonzero or non-empty, and the statement
  has no hypothesis, type or binder that says so.
- `lint.inverse_notation`: `f⁻¹` of a function variable (in Mathlib the pointwise reciprocal)
  where the text speaks of an inverse function, not a reciprocal.
- `lint.multiplicative_wrapper`: `Multiplicative`/`Additive` type wrappers the text never
  speaks of (they change which operation `*`/`+` is).
- `lint.top_smoothness`: `⊤` as the order of a `ContDiff…` class (analytic in current
  Mathlib) where the text says smooth / infinitely differentiable / C^∞ (that is `∞`).
- `lint.subset_direction`: the text says A ⊆ B and the statement only has B ⊆ A.
- `lint.unique_existence`: the text says unique / exactly one and the statement has ∃ but no
  ∃!, or the statement has ∃! and the text never says unique.
- `lint.unmatched_variable`: a variable of the text's formulas (a single letter) with no
  counterpart among the statement's names.
"""

from __future__ import annotations

import re

from math2.checks.base import register
from math2.checks.lints.common import Lint
from math2.checks.statement import Statement
from math2.lean.lexer import Tok, Token

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


def _tokens(st: Statement) -> list[Token]:
    return [t for b in st.binders for t in b.type] + st.goal


#: Symbols the lexer splits that Lean reads as one token: `∃!`, `⁻¹`; and, only when the two
#: parts touch, the preimage `⁻¹'` (not a reciprocal) and `ℕ+` (the positive naturals, `PNat`).
_JOINED = {("∃", "!"), ("⁻", "¹")}
_JOINED_TOUCHING = {("⁻¹", "'"), ("ℕ", "+")}


def _words(toks: list[Token]) -> list[str]:
    """Token texts with the lexer's split symbols joined again (`∃ !` → `∃!`, `⁻ ¹` → `⁻¹`,
    `⁻¹'` the preimage, `ℕ+`)."""
    out: list[str] = []
    end = -1  # where the previous token ended
    for t in toks:
        pair = (out[-1], t.text) if out else None
        if pair in _JOINED or (pair in _JOINED_TOUCHING and t.offset == end):
            out[-1] += t.text
        else:
            out.append(t.text)
        end = t.offset + len(t.text)
    return out


def _text(st: Statement) -> str:
    return " ".join(_words(_tokens(st)))


def _hypotheses_text(st: Statement) -> str:
    """The binders only (hypotheses and types): what the statement assumes, not its goal."""
    return " ".join(_words([t for b in st.binders for t in b.type]))


def _math(informal: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _MATH.finditer(informal)]


_POSITIVE = re.compile(r"\b(positive|non-?zero|strictly greater than (zero|0))\b", re.I)
_NONEMPTY = re.compile(r"\bnon-?empty\b", re.I)
_POS_EVIDENCE = re.compile(
    r"0 <|< 0|> 0|0 >|≠ 0|0 ≠|ℕ\+|PNat|\bPos\b|pos\b|1 ≤|≥ 1|1 <|> 1|NeZero|Nat\.Prime|"
    r"\.Prime|Prime|Positive|positive|≠ ⊥|IsUnit|Finset\.Icc 1|Icc 1|Ioi 0|Set\.Ioi|"
    r"2 ≤|≥ 2|Odd|Pos|posPart",
)
_NONEMPTY_EVIDENCE = re.compile(r"Nonempty|nonempty|≠ ∅|∅ ≠|card|Inhabited|\.Nonempty")


@register("lint.missing_positivity")
class MissingPositivity(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        text = _hypotheses_text(st)
        # a binder of the goal (`∀ n > 0, …`, `∃ x > 0, …`) assumes too
        goal = " ".join(_words(st.goal))
        text += " " + " ".join(re.findall(r"[∀∃]!? [^,]*,", goal))
        out = []
        if _POSITIVE.search(informal) and not _POS_EVIDENCE.search(text):
            out.append("the text says positive or nonzero; no hypothesis or type says so")
        if _NONEMPTY.search(informal) and not _NONEMPTY_EVIDENCE.search(text):
            out.append("the text says non-empty; no `Nonempty` or `≠ ∅` in the statement")
        return out


_RECIPROCAL = re.compile(r"\breciprocal|1\s*/|\\frac\s*\{?1\}?", re.I)
_INVERSE = re.compile(r"\binverse\b|\^\{-1\}|\^-1|⁻¹", re.I)


@register("lint.inverse_notation")
class InverseNotation(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        fns = {n for n, b in st.variables.items() if any(t.text == "→" for t in b.type)}
        words = _words(_tokens(st))
        hits = [
            words[k - 1] for k, w in enumerate(words) if w == "⁻¹" and k and words[k - 1] in fns
        ]
        if hits and _INVERSE.search(informal) and not _RECIPROCAL.search(informal):
            return [
                f"`{h}⁻¹` is the pointwise reciprocal of a function, not its inverse function"
                for h in sorted(set(hits))
            ]
        return []


_WRAPPER_WORDS = re.compile(r"multiplicative|additive", re.I)


@register("lint.multiplicative_wrapper")
class MultiplicativeWrapper(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        used = sorted({t.text for t in _tokens(st) if t.text in ("Multiplicative", "Additive")})
        if used and not _WRAPPER_WORDS.search(informal):
            return [f"`{w}` changes which operation is meant; the text never says so" for w in used]
        return []


_SMOOTH = re.compile(r"\bsmooth|infinitely (often )?differentiable|C\^\{?\\infty|C\^∞|C∞", re.I)
_ANALYTIC = re.compile(r"\banalytic", re.I)


@register("lint.top_smoothness")
class TopSmoothness(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        toks = _tokens(st)
        for k, t in enumerate(toks):
            if t.kind is Tok.IDENT and t.text.split(".")[-1].startswith("ContDiff"):
                window = [x.text for x in toks[k + 1 : k + 4]]
                if "⊤" in window and _SMOOTH.search(informal) and not _ANALYTIC.search(informal):
                    return [f"`{t.text} … ⊤` is analytic (ω); smooth (C^∞) is `∞`"]
        return []


_SUBSET_TEXT = [
    re.compile(
        r"\b([A-Z])\$?\s+is\s+(?:a\s+)?(?:proper\s+)?(?:subset|contained)\s+(?:of|in)\s+\$?([A-Z])\b"
    ),
    re.compile(r"\b([A-Z])\s*\\subset(?:eq)?\s*([A-Z])\b"),
    re.compile(r"\b([A-Z])\s*[⊆⊂]\s*([A-Z])\b"),
]


@register("lint.subset_direction")
class SubsetDirection(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        said = {m.groups() for rx in _SUBSET_TEXT for m in rx.finditer(informal)}
        toks = _tokens(st)
        formal = {
            (toks[k - 1].text, toks[k + 1].text)
            for k, t in enumerate(toks)
            if t.text in ("⊆", "⊂") and 0 < k < len(toks) - 1
        }
        out = []
        for a, b in sorted(said):
            if a != b and (b, a) in formal and (a, b) not in formal:
                out.append(f"the text says {a} ⊆ {b}; the statement has {b} ⊆ {a}")
        return out


_UNIQUE = re.compile(
    r"\bunique(ly)?\b|\bexactly one\b|\bprecisely one\b|\bone and only one\b", re.I
)


@register("lint.unique_existence")
class UniqueExistence(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        words = set(_words(_tokens(st)))
        unique_formal = bool(words & {"∃!", "ExistsUnique", "Unique"}) or any(
            "card" in w or "ncard" in w or "encard" in w for w in words
        )
        exists = bool(words & {"∃", "Exists"})
        if _UNIQUE.search(informal) and exists and not unique_formal:
            return ["the text says unique / exactly one; the statement has ∃ without ∃!"]
        if "∃!" in words and not _UNIQUE.search(informal):
            return ["the statement says ∃! (unique); the text never says unique"]
        return []


_LETTER = re.compile(r"(?<![\\A-Za-z])([A-Za-z])(?![A-Za-z])")
#: Commands whose argument names a fixed object or is a word, never a variable: number systems
#: and other blackboard letters (`\mathbb{R}`, `\Bbb Z`), upright text and operator names.
_FIXED_ARG = re.compile(
    r"\\(?:mathbb|Bbb|mathrm|operatorname|text(?:rm|up|normal)?)(?![A-Za-z])\*?\s*"
    r"(?:\{[^{}]*\}|[A-Za-z])"
)
_LATEX_CMD = re.compile(r"\\[A-Za-z]+|\\.")
_COMMON = set("deiox")  # e, i, d (dx), o (little-o), x is checked like any other… except here


@register("lint.unmatched_variable")
class UnmatchedVariable(Lint):
    def judge(self, st: Statement, informal: str) -> list[str]:
        letters: set[str] = set()
        for m in _math(informal):
            m = _FIXED_ARG.sub(" ", m)
            m = _LATEX_CMD.sub(" ", m)
            m = re.sub(r"\{[a-z]+\}", " ", m)  # \mathrm{d}, \text{if}
            letters |= {x for x in _LETTER.findall(m)}
        letters -= _COMMON - {"x"}
        if not letters:
            return []
        names = set()
        for t in [*_tokens(st), *(tok for b in st.binders for tok in b.type)]:
            if t.kind is Tok.IDENT:
                names |= set(t.text.split("."))
        for b in st.binders:
            names |= set(b.names)
        bases = {re.sub(r"[₀-₉'_0-9]+$", "", n) for n in names}
        missing = sorted(x for x in letters if x not in bases and x not in names)
        return [f"the text's `{x}` has no counterpart in the statement" for x in missing]
