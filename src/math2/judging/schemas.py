"""What the consistency judge answers: structured output, validated."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class DefectKind(StrEnum):
    """MathForm's six defect kinds."""

    MISSING_PRECONDITION = "missing_precondition"
    CHANGED_CONDITION = "changed_condition"  # strengthened or weakened
    QUANTIFIER_ORDER = "quantifier_order"
    REDUNDANT_CONSTRAINT = "redundant_constraint"
    MISALIGNED_OBJECT = "misaligned_object"
    INCONSISTENT_CONCLUSION = "inconsistent_conclusion"


class Defect(BaseModel):
    """One defect, with the clause it concerns."""

    kind: DefectKind
    clause: str = Field(min_length=1)
    explanation: str = ""


class JudgeVerdict(BaseModel):
    """The consistency judge's verdict: consistent only with no defect."""

    consistent: bool
    defects: list[Defect] = Field(default_factory=list)
    needs_retrieval: bool = False
    queries: list[str] = Field(default_factory=list, max_length=5)

    def passed(self) -> bool:
        """Consistent and without a single defect (a 'consistent' verdict with defects fails)."""
        return self.consistent and not self.defects
