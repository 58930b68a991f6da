"""What the planner answers (the judge's answer is `math2.judging`'s): structured output."""

from __future__ import annotations

from pydantic import BaseModel, Field

from math2.judging import Defect, DefectKind, JudgeVerdict

__all__ = ["Defect", "DefectKind", "JudgeVerdict", "PlannerDecision"]


class PlannerDecision(BaseModel):
    """The retrieval planner's decision."""

    search: bool
    queries: list[str] = Field(default_factory=list, max_length=5)
    reason: str = ""
