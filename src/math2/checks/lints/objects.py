"""`lint.no_shared_objects`: a formal statement that mentions none of the text's objects."""

from __future__ import annotations

import re

from math2.checks.base import register
from math2.checks.lints.common import Lint
from math2.checks.statement import Statement
from math2.lean.lexer import Tok
from math2.lean.syntax import split_identifier

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_LATEX_CMD = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[A-Za-z]{4,}")
_NUM = re.compile(r"\d+")
_STOP = set(
    [
        "that",
        "this",
        "with",
        "then",
        "there",
        "their",
        "these",
        "those",
        "where",
        "which",
        "what",
        "when",
        "show",
        "prove",
        "suppose",
        "given",
        "find",
        "from",
        "have",
        "each",
        "every",
        "some",
        "such",
        "than",
        "into",
        "only",
        "also",
        "must",
        "let",
        "assume",
        "value",
        "values",
        "answer",
        "true",
        "false",
        "holds",
        "following",
        "exists",
    ]
)


def text_objects(informal: str) -> tuple[set[str], set[str], set[str]]:
    """(math variables, numbers, content words) of an informal statement."""
    variables: set[str] = set()
    for m in _MATH.finditer(informal):
        body = _LATEX_CMD.sub(" ", next(g for g in m.groups() if g is not None))
        variables |= set(re.findall(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])", body))
    numbers = set(_NUM.findall(informal))
    words = {w.lower() for w in _WORD.findall(_MATH.sub(" ", informal))} - _STOP
    return variables, numbers, words


def formal_objects(st: Statement) -> tuple[set[str], set[str], set[str]]:
    """(variable names, numerals, lower-cased word parts of identifiers) of a statement."""
    toks = [t for b in st.binders for t in b.type] + st.goal
    variables = {n for b in st.binders for n in b.names}
    variables |= {t.text for t in toks if t.kind is Tok.IDENT and len(t.text) <= 3}
    variables |= {_BLACKBOARD[v] for v in variables if v in _BLACKBOARD}
    numbers = {t.text for t in toks if t.kind is Tok.NUMBER}
    idents = [t.text for t in toks if t.kind is Tok.IDENT] + [st.name]
    parts = {w for i in idents for w in _words(i)}
    parts |= {_BLACKBOARD_WORD[t.text] for t in toks if t.text in _BLACKBOARD_WORD}
    return variables, numbers, parts


def _words(ident: str) -> set[str]:
    """An identifier's words of three or more ASCII letters, lower-cased (`split_identifier`)."""
    return {w for w in split_identifier(ident) if len(w) >= 3 and w.isascii() and w.isalpha()}


_BLACKBOARD = {"ℕ": "N", "ℤ": "Z", "ℚ": "Q", "ℝ": "R", "ℂ": "C"}
_BLACKBOARD_WORD = {"ℕ": "natural", "ℤ": "integer", "ℚ": "rational", "ℝ": "real", "ℂ": "complex"}


@register("lint.no_shared_objects")
class NoSharedObjects(Lint):
    declared_status = "fail"  # before it was measured it failed pairs

    def judge(self, st: Statement, informal: str) -> list[str]:
        tv, tn, tw = text_objects(informal)
        fv, fn, fw = formal_objects(st)
        if not (tv or tn or tw):
            return []
        base = {v.rstrip("₀₁₂₃₄₅₆₇₈₉'") for v in fv}
        shared_words = {w for w in tw if any(w.startswith(p) or p.startswith(w) for p in fw)}
        if tv & (fv | base) or tn & fn or shared_words:
            return []
        return [
            "no shared object: text variables "
            f"{sorted(tv)[:8]}, numbers {sorted(tn)[:8]}; formal names {sorted(fv)[:8]}"
        ]
