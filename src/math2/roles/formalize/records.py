"""The typed records of the formalize role."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from math2.judging import Defect


class FormalizeInput(BaseModel):
    """One natural-language statement to formalize."""

    id: str
    statement: str = Field(min_length=1)
    header: str | None = None  # extra `open …` lines (imports come from the settings)
    source: str | None = None  # where the statement came from (file:line, benchmark item)
    # The node this statement is for (`formalize --from`): an accepted statement becomes the
    # node's proposed binding (math2.roles.align.lifecycle), checked by Lean, then reviewed.
    node: str | None = None
    # The first sample index: pass@k evaluation runs the loop once per sample k, and each must
    # ask its own questions (the response cache is keyed by the sample index).
    sample: int = 0


class Outcome(StrEnum):
    """How an item ended."""

    PASSED = "passed"  # compiled and judged consistent
    FAILED = "failed"  # no round passed both checks
    NO_LEAN = "no_lean"  # the model never produced a Lean block
    REFUSED = "refused"  # every Lean block was refused by hygiene before compiling


class Hit(BaseModel):
    """A retrieved Mathlib declaration, as the generator saw it."""

    name: str
    statement: str = ""


class RoundLog(BaseModel):
    """What happened in one round (or one best-of-N sample)."""

    round: int
    sample: int = 0
    queries: list[str] = Field(default_factory=list)
    hits: list[Hit] = Field(default_factory=list)
    search_note: str | None = None  # why the queries found nothing (no index)
    lean: str | None = None
    finish_reason: str | None = None  # the generator's ("timeout": cut off at its deadline)
    # Where the Lean was taken from: "fence", "tag", or "no Lean block" (with the reason).
    extraction: str | None = None
    extraction_note: str = ""
    compiled_by: str = ""  # the Lean that judged it, as it reported itself
    compile_status: str | None = None
    compile_passed: bool = False
    feedback: str = ""
    consistent: bool | None = None
    defects: list[Defect] = Field(default_factory=list)
    judge_error: str | None = None
    attempt_ids: list[int] = Field(default_factory=list)


class FormalizeResult(BaseModel):
    """The item after the loop: the outcome, the accepted Lean, and every round."""

    id: str
    statement: str
    outcome: Outcome
    passed_round: int | None = None
    lean: str | None = None
    theorem: str | None = None
    rounds: list[RoundLog] = Field(default_factory=list)
    generate_attempt_id: int | None = None
    agent_text_id: int | None = None
    node: str | None = None  # the node key of the input, if any
    source: str | None = None  # where the statement came from (the input's file:line, …)
    binding_id: int | None = None  # the proposed binding of an accepted statement for a node
