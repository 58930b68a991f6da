"""What the align judge answers, and what a judged pair records."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class Relation(StrEnum):
    """How the two statements of a pair are related."""

    SAME = "same"  # the same result (up to notation and encoding)
    IMPLIES = "implies"  # one implies the other (a special case, a stronger hypothesis …)
    RELATED = "related"  # the same topic, neither implies the other as stated
    DIFFERENT = "different"


class AlignVerdict(BaseModel):
    """The judge's structured verdict."""

    verdict: Relation
    reasons: str = Field(min_length=1)
    differing_clauses: list[str] = Field(default_factory=list, max_length=8)


class AlignOutcome(StrEnum):
    """What became of a pair."""

    ACCEPTED = "accepted"  # verdict `same`: the pair is a crosswalk edge now
    REJECTED = "rejected"  # another verdict: it stays a candidate, with the reason
    UNJUDGED = "unjudged"  # no readable verdict: it stays a candidate, never an edge


class Side(BaseModel):
    """One side of a pair as the store holds it."""

    system: str
    name: str = ""
    text: str = ""
    context: str = ""  # the Lean side's dependencies (names and statements)


class AlignPair(BaseModel):
    """A candidate pair to judge: a crosswalk row (node → declaration) and both sides' text."""

    id: str  # "cw:<crosswalk id>"
    crosswalk_id: int
    dataset: str  # the source that proposed the pair
    left: Side
    right: Side


class AlignResult(BaseModel):
    """A judged pair."""

    id: str
    crosswalk_id: int
    outcome: AlignOutcome
    verdict: AlignVerdict | None = None
    error: str | None = None
    attempt_id: int | None = None
    binding_id: int | None = None
