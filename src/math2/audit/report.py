"""The audit report: error rates with intervals per role and stratum, and each check's quality.

A sample's grade is the most severe grade any grader gave it (major > minor > correct). A pair
is *rejected* by the person when its grade is minor or major (Herald counts both as errors).

- Error rate per (role, stratum) and per role: rejected / graded, with a 95% Wilson interval
  (and the major-only rate with its interval).
- For each automatic check (and checker), against the grades of the pairs it judged: flagged
  = verdict fail or error (an undecided check does not accept); precision = rejected among
  flagged; recall = flagged among rejected; `lets_through` = rejected pairs the check passed —
  the figure that says how many bad pairs a battery of this check alone would accept.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.audit.stats import wilson_interval
from math2.checks.calibration import BATTERY, Calibration, calibrate, labelled_verdicts
from math2.store.work import AuditGrade, AuditSample, Grade

__all__ = ["AuditReport", "CheckQuality", "RateRow", "audit_report"]

_SEVERITY = {Grade.CORRECT.value: 0, Grade.MINOR.value: 1, Grade.MAJOR.value: 2}


class RateRow(BaseModel):
    role: str
    stratum: str  # "*" for the role as a whole
    samples: int
    graded: int
    correct: int
    minor: int
    major: int
    error_rate: float | None
    error_low: float
    error_high: float
    major_rate: float | None
    major_low: float
    major_high: float


class CheckQuality(BaseModel):
    check: str
    checker: str
    judged: int  # graded pairs the check gave a pass/fail/error verdict on
    flagged: int
    rejected: int
    true_pos: int
    false_pos: int
    false_neg: int
    errors: int
    precision: float | None
    recall: float | None
    lets_through: int


class AuditReport(BaseModel):
    audit: str
    rates: list[RateRow]
    checks: list[CheckQuality]
    # the same figures `math2 check --labels` gives (recall, false flags, Wilson intervals, per
    # grade, the battery, judges' agreement), from the same computation
    calibration: Calibration | None = None


def _rate(role: str, stratum: str, samples: int, grades: list[str]) -> RateRow:
    n = len(grades)
    minor = grades.count(Grade.MINOR.value)
    major = grades.count(Grade.MAJOR.value)
    lo, hi = wilson_interval(minor + major, n)
    mlo, mhi = wilson_interval(major, n)
    return RateRow(
        role=role,
        stratum=stratum,
        samples=samples,
        graded=n,
        correct=n - minor - major,
        minor=minor,
        major=major,
        error_rate=(minor + major) / n if n else None,
        error_low=lo,
        error_high=hi,
        major_rate=major / n if n else None,
        major_low=mlo,
        major_high=mhi,
    )


def audit_report(s: Session, audit: str) -> AuditReport:
    samples = list(s.scalars(select(AuditSample).where(AuditSample.audit == audit)))
    final: dict[int, str] = {}
    for g in s.scalars(select(AuditGrade).where(AuditGrade.sample_id.in_([x.id for x in samples]))):
        if g.sample_id not in final or _SEVERITY[g.grade] > _SEVERITY[final[g.sample_id]]:
            final[g.sample_id] = g.grade
    cells: dict[tuple[str, str], list[AuditSample]] = defaultdict(list)
    for x in samples:
        cells[(x.role, x.stratum)].append(x)
        cells[(x.role, "*")].append(x)
    rates = [
        _rate(role, stratum, len(xs), [final[x.id] for x in xs if x.id in final])
        for (role, stratum), xs in sorted(cells.items())
    ]
    # each check against the grades: one computation with `math2 check --labels`
    graded = {x.pair_key: final[x.id] for x in samples if x.id in final}
    correct = Grade.CORRECT.value
    rows = labelled_verdicts(
        s, {k: (g == correct, [] if g == correct else [g]) for k, g in graded.items()}
    )
    cal = calibrate(rows) if rows else None
    checks = [
        CheckQuality(
            check=f.check,
            checker=f.checker,
            judged=f.judged,
            flagged=f.precision.n,
            rejected=f.recall.n,
            true_pos=f.recall.k,
            false_pos=f.false_flag.k,
            false_neg=f.recall.n - f.recall.k,
            errors=f.errors,
            precision=f.precision.value,
            recall=f.recall.value,
            lets_through=f.lets_through,
        )
        for f in (cal.checks if cal else [])
        if f.check != BATTERY and f.judged
    ]
    return AuditReport(audit=audit, rates=rates, checks=checks, calibration=cal)
