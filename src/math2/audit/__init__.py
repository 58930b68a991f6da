"""The sample audit (K9.7): draw a stratified sample of accepted pairs, take a person's grades
(correct / minor / major, with the reason and the grader), and report the error rate with a
Wilson interval per role and stratum, and each automatic check's precision and recall against
the grades.

    with store.session() as s:
        draw(s, "audit-1", candidates_from_store(s), per_stratum=50, seed=0)
        import_grades(s, "audit-1", Path("grades.jsonl"), grader="alice")
        report = audit_report(s, "audit-1")
"""

from math2.audit.grades import import_grades, read_grade_rows
from math2.audit.report import AuditReport, CheckQuality, RateRow, audit_report
from math2.audit.sample import (
    Candidate,
    candidates_from_file,
    candidates_from_store,
    draw,
    role_of,
)
from math2.audit.stats import bootstrap_interval, wilson_interval

__all__ = [
    "AuditReport",
    "Candidate",
    "CheckQuality",
    "RateRow",
    "audit_report",
    "bootstrap_interval",
    "candidates_from_file",
    "candidates_from_store",
    "draw",
    "import_grades",
    "read_grade_rows",
    "role_of",
    "wilson_interval",
]
