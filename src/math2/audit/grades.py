"""Reading a person's grades from a file into `audit_grades`.

JSONL (one object a line) or CSV (a header row), with `sample` (the audit sample's id) or
`pair_key`, `grade` (correct / minor / major, Herald's scale), `reason` (required for minor and
major) and `grader` (or the `grader` argument for the whole file). Every line is validated
before anything is written; a grade given again by the same grader replaces the earlier one.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.errors import InputError
from math2.store.work import AuditGrade, AuditSample, Grade
from math2.util.jsonl import read_jsonl
from math2.util.textlimit import check_strings

__all__ = ["import_grades", "read_grade_rows"]


def read_grade_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, row) of a grades file; InputError names the file and line of bad input."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, None, f"not UTF-8 ({e.reason})") from None
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        for i, row in enumerate(reader, 2):
            values = {k.strip(): (v or "").strip() for k, v in row.items() if k}
            check_strings(values, path, i)
            rows.append((i, values))
    else:
        rows.extend(read_jsonl(path))
    if not rows:
        raise InputError(path, None, "no grades in the file (it is empty)")
    return rows


def import_grades(s: Session, audit: str, path: Path, grader: str | None = None) -> dict[str, int]:
    """Validate every row, then write the grades; counts per grade."""
    path = Path(path)
    samples = {r.id: r for r in s.scalars(select(AuditSample).where(AuditSample.audit == audit))}
    if not samples:
        raise InputError(path, None, f"the audit {audit!r} has no samples: draw it first")
    by_key = {r.pair_key: r for r in samples.values()}
    parsed: list[tuple[AuditSample, str, Grade, str]] = []
    for line, row in read_grade_rows(path):
        sample = None
        if str(row.get("sample", "")).strip():
            try:
                sample = samples.get(int(row["sample"]))
            except (TypeError, ValueError):
                raise InputError(path, line, f"sample {row['sample']!r} is not a number") from None
        elif row.get("pair_key"):
            sample = by_key.get(str(row["pair_key"]))
        else:
            raise InputError(path, line, "no `sample` or `pair_key`")
        if sample is None:
            raise InputError(path, line, f"no such sample in the audit {audit!r}")
        try:
            grade = Grade(str(row.get("grade", "")).strip().lower())
        except ValueError:
            raise InputError(
                path, line, f"grade {row.get('grade')!r}: expected correct, minor or major"
            ) from None
        who = str(row.get("grader") or grader or "").strip()
        if not who:
            raise InputError(path, line, "no grader (a `grader` field or --grader)")
        reason = str(row.get("reason") or "").strip()
        for field, value, most in (("grader", who, 200), ("reason", reason, 10_000)):
            if len(value) > most:
                raise InputError(
                    path, line, f"{field!r} is {len(value):,} characters; the limit is {most:,}"
                )
        if grade is not Grade.CORRECT and not reason:
            raise InputError(path, line, f"a {grade.value} grade needs a reason")
        parsed.append((sample, who, grade, reason))
    counts: dict[str, int] = {}
    for sample, who, grade, reason in parsed:
        row = s.scalar(
            select(AuditGrade).where(AuditGrade.sample_id == sample.id, AuditGrade.grader == who)
        )
        if row is None:
            row = AuditGrade(sample_id=sample.id, grader=who, grade=grade.value, reason=reason)
            s.add(row)
        else:
            row.grade, row.reason = grade.value, reason
        counts[grade.value] = counts.get(grade.value, 0) + 1
    s.flush()
    return counts
