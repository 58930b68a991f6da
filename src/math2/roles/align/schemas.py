"""What the align judge answers, and what a judged pair records."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, model_validator


class Relation(StrEnum):
    """How the two statements of a pair are related."""

    SAME = "same"  # the same result (up to notation and encoding)
    IMPLIES = "implies"  # one implies the other (a special case, a stronger hypothesis …)
    RELATED = "related"  # the same topic, neither implies the other as stated
    DIFFERENT = "different"


class Direction(StrEnum):
    """Which side implies the other, for an `implies` verdict (left: the node's side)."""

    LEFT_IMPLIES_RIGHT = "left_implies_right"
    RIGHT_IMPLIES_LEFT = "right_implies_left"


class AlignVerdict(BaseModel):
    """The judge's structured verdict."""

    verdict: Relation
    reasons: str = Field(min_length=1)
    differing_clauses: list[str] = Field(default_factory=list, max_length=8)
    # Required with `implies` (an answer without it is asked again), ignored otherwise.
    direction: Direction | None = None

    @model_validator(mode="after")
    def _implies_has_a_direction(self) -> AlignVerdict:
        if self.verdict is Relation.IMPLIES and self.direction is None:
            raise ValueError("an `implies` verdict needs its direction")
        if self.verdict is not Relation.IMPLIES:
            self.direction = None
        return self


class EdgeRelation(StrEnum):
    """The relation of an accepted crosswalk edge (`Crosswalk.relation`)."""

    SAME_AS = "same_as"  # the same result: a binding is proposed
    IMPLIES = "implies"  # one implies the other: `extra["direction"]` says which; no binding


class EdgeDirection(StrEnum):
    """An `implies` edge's direction, in the edge's terms (node → target declaration)."""

    NODE_IMPLIES_TARGET = "node_implies_target"
    TARGET_IMPLIES_NODE = "target_implies_node"


class AlignOutcome(StrEnum):
    """What became of a pair."""

    ACCEPTED = "accepted"  # verdict `same`: the pair is a same_as edge now
    IMPLIES = "implies"  # verdict `implies`: an `implies` edge with its direction (no binding)
    REJECTED = "rejected"  # related or different: it stays a candidate, with the reason
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
    dataset: str = ""  # the source that proposed the pair (the input's)
    verdict: AlignVerdict | None = None
    error: str | None = None
    attempt_id: int | None = None
    binding_id: int | None = None
