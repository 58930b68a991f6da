"""Grading the sample audit (Herald's human study): grades in, the per-stratum report out.

The report is computed here from `audit_samples` and `audit_grades`; `math2.audit` (issue 12)
computes the full audit report, and this page can switch to it once it is on main.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.store import AuditGrade, AuditSample, Grade
from math2.store.upsert import upsert
from math2.web.review import ReviewError


class StratumReport(BaseModel):
    """Grades of one stratum of one audit."""

    role: str
    library: str
    stratum: str
    samples: int
    graded: int  # samples with at least one grade
    correct: int = 0
    minor: int = 0
    major: int = 0

    @property
    def grades(self) -> int:
        """How many grades (a sample graded by two people counts twice)."""
        return self.correct + self.minor + self.major

    @property
    def correct_rate(self) -> float | None:
        """Share of grades that are `correct` (None before any grade)."""
        return self.correct / self.grades if self.grades else None


def audits(s: Session) -> list[str]:
    """The names of all drawings, in name order."""
    rows = s.execute(
        select(AuditSample.audit).group_by(AuditSample.audit).order_by(AuditSample.audit)
    )
    return [r[0] for r in rows]


def report(s: Session, audit: str) -> list[StratumReport]:
    """Per (role, library, stratum): samples, graded samples and counts of each grade."""
    samples = s.execute(
        select(AuditSample.id, AuditSample.role, AuditSample.library, AuditSample.stratum).where(
            AuditSample.audit == audit
        )
    ).all()
    grades = s.execute(
        select(AuditGrade.sample_id, AuditGrade.grade)
        .join(AuditSample, AuditSample.id == AuditGrade.sample_id)
        .where(AuditSample.audit == audit)
    ).all()
    by_sample: dict[int, Counter[str]] = defaultdict(Counter)
    for sample_id, grade in grades:
        by_sample[sample_id][grade] += 1
    strata: dict[tuple[str, str, str], StratumReport] = {}
    for sid, role, library, stratum in samples:
        key = (role, library, stratum)
        rep = strata.setdefault(
            key, StratumReport(role=role, library=library, stratum=stratum, samples=0, graded=0)
        )
        rep.samples += 1
        counts = by_sample.get(sid)
        if counts:
            rep.graded += 1
            rep.correct += counts[Grade.CORRECT.value]
            rep.minor += counts[Grade.MINOR.value]
            rep.major += counts[Grade.MAJOR.value]
    return [strata[k] for k in sorted(strata)]


def grade_sample(
    s: Session, audit: str, sample_id: int, grader: str, grade: str, reason: str
) -> AuditGrade:
    """Record (or replace) one grader's grade of one sample of `audit`; a grade other than
    correct needs a reason, as in Herald's study (what would have to change)."""
    try:
        value = Grade(grade)
    except ValueError as exc:
        raise ReviewError(f"grade must be correct, minor or major, not {grade!r}") from exc
    reason = reason.strip()
    if value is not Grade.CORRECT and not reason:
        raise ReviewError("a minor or major grade needs a reason")
    sample = s.get(AuditSample, sample_id)
    if sample is None or sample.audit != audit:
        raise ReviewError(f"audit {audit!r} has no sample {sample_id}")
    # One statement, so two grades of one grader racing leave one row (the later one), never
    # a unique-key error.
    upsert(
        s,
        AuditGrade,
        {"sample_id": sample_id, "grader": grader, "grade": value.value, "reason": reason},
        keys=("sample_id", "grader"),
        update=("grade", "reason"),
    )
    row = s.scalars(
        select(AuditGrade)
        .where(AuditGrade.sample_id == sample_id, AuditGrade.grader == grader)
        .execution_options(populate_existing=True)
    ).one()
    return row
