"""What the lints share: the lint base class and a reading of comparisons."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from math2.checks.base import Check, CheckEnv, Outcome, Pair
from math2.checks.statement import (
    NotAStatement,
    Statement,
    StatementError,
    parse_statement,
    strip_parens,
    texts,
    top_level,
)
from math2.lean.brackets import matching
from math2.lean.lexer import Token
from math2.store.work import Verdict

REL = {"=", "≠", "<", ">", "≤", "≥", "↔", "<=", ">="}

#: A lint fails a pair only when its precision on the labelled dev set is at least this.
PRECISION_BAR = 0.9
PRECISION_FILE = Path(__file__).with_name("precision.json")


@cache
def measured_precision() -> dict[str, dict[str, Any]]:
    """The committed precision of each lint on the dev set (`precision.json`, written by
    `benchmarks/lint_precision.py` from `math2 check DIR/pairs.jsonl --labels`, DIR the data
    set checks-dev)."""
    if not PRECISION_FILE.exists():
        return {}
    lints: dict[str, dict[str, Any]] = json.loads(PRECISION_FILE.read_text(encoding="utf-8")).get(
        "lints", {}
    )
    return lints


def warns(name: str, declared: str) -> bool:
    """Whether a lint's findings only warn: its measured precision on the dev set is under the
    bar; when it flagged no dev pair (no precision to measure) its declared status decides."""
    m = measured_precision().get(name)
    if m is None or not m.get("flagged") or m.get("precision") is None:
        return declared == "warn"
    return bool(m["precision"] < PRECISION_BAR)


def key(toks: list[Token]) -> str:
    return " ".join(texts(strip_parens(toks)))


class Lint(Check):
    """A lint: parse once, then `judge` the statement."""

    #: skip definitions of predicates and types (their "hypotheses" are parameters)
    statements_only: bool = True
    #: "fail" or "warn" until the lint's precision is measured (then the measure decides)
    declared_status: str = "warn"

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:
        return self.check(pair)

    def check(self, pair: Pair) -> Outcome:
        try:
            st = parse_statement(pair.formal, pair.meta.get("name"))
        except NotAStatement as e:
            return self.outcome(Verdict.SKIP, evidence={"reason": str(e)})
        except StatementError as e:
            return self.outcome(Verdict.ERROR, evidence={"reason": f"unreadable statement: {e}"})
        if (
            self.statements_only
            and st.kind not in {"theorem", "lemma", "example"}
            and texts(st.goal)[:1]
            in (
                ["Prop"],
                ["Type"],
                ["Type*"],
                ["Sort"],
                ["Sort*"],
            )
        ):
            reason = f"a definition of a {texts(st.goal)[0]}-valued {st.kind}, not a statement"
            return self.outcome(Verdict.SKIP, evidence={"reason": reason})
        findings = self.judge(st, pair.informal)
        # under the precision bar a finding is reported but does not fail the pair; a pass says
        # so too, so the stored verdicts tell which checks only warn (`math2 check --labels`)
        warn = {"warn": True} if warns(self.label, self.declared_status) else {}
        if findings:
            return self.outcome(Verdict.FAIL, evidence={"findings": findings, **warn})
        return self.outcome(Verdict.PASS, evidence=warn)

    def judge(self, st: Statement, informal: str) -> list[str]:  # pragma: no cover
        raise NotImplementedError


def split_top(toks: list[Token], sym: str) -> list[list[Token]]:
    cuts = top_level(toks, {sym})
    out, prev = [], 0
    for c in cuts:
        out.append(toks[prev:c])
        prev = c + 1
    out.append(toks[prev:])
    return out


def close_bracket(toks: list[Token], i: int) -> int:
    """The bracket closing the one at i (`math2.lean.brackets`); len(toks) when none does."""
    j = matching(toks, i)
    return len(toks) if j is None else j


def relation(toks: list[Token]) -> tuple[str, str, str] | None:
    """(lhs, rel, rhs) when the expression is one top-level comparison."""
    toks = strip_parens(toks)
    if toks and toks[0].text in {"∀", "∃", "∃!", "fun", "λ"}:
        return None
    cuts = top_level(toks, REL | {"∧", "∨", "→"})
    if len(cuts) != 1 or toks[cuts[0]].text not in REL:
        return None
    c = cuts[0]
    return key(toks[:c]), toks[c].text, key(toks[c + 1 :])


def numeral(s: str) -> Fraction | None:
    try:
        return Fraction(s.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None


FLIP = {"<": ">", ">": "<", "≤": "≥", "≥": "≤", "=": "=", "≠": "≠", "↔": "↔"}
NEG = {"<": "≥", "≤": ">", ">": "≤", "≥": "<", "=": "≠", "≠": "="}


def norm_relation(rel: tuple[str, str, str]) -> tuple[str, str, str]:
    a, r, b = rel
    r = {"<=": "≤", ">=": "≥"}.get(r, r)
    if r in {">", "≥"}:
        return b, FLIP[r], a
    return a, r, b


def false_comparison(a: str, r: str, b: str) -> bool:
    x, y = numeral(a), numeral(b)
    if x is None or y is None:
        return False
    return not {
        "<": x < y,
        "≤": x <= y,
        "=": x == y,
        "≠": x != y,
    }.get(r, True)
