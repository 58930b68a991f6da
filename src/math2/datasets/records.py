"""Training records from formalize trajectories: SFT examples and the RL prompt set.

SFT (trajectory reconstruction, seed 000): the input is the informal statement, the target is
a reasoning trace plus the final verified Lean statement. The trace is written by a model from
the input and the final output only (never from the noisy multi-round log); proof tactics are
stripped from both: the statement's proof becomes `sorry`, and trace lines that talk about
tactics or contain Lean code are dropped.

RL prompts: items the loop did not pass within its rounds but whose statement is unambiguous
(here: no round's judge reported a defect that says the text itself is unclear, and the
statement is at least a sentence long), as `{"prompt": …, "label": informal}` for
r(x, y) = compile(y) ∧ consistent(x, y).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from math2.lean.commands import split_code
from math2.lean.reader import statement_only
from math2.roles.formalize import FormalizeResult, Outcome

__all__ = [
    "SYSTEM_PROMPT",
    "RLPrompt",
    "Review",
    "SFTRecord",
    "rl_prompts",
    "sft_record",
    "statement_only",  # math2.lean.reader's: the statement kept whole, its proof `sorry`
    "strip_tactics",
]

SYSTEM_PROMPT = (
    "Translate the mathematical statement into a Lean 4 (Mathlib) theorem statement. "
    "Reason about the objects, hypotheses and conclusion first; end with the statement in a "
    "```lean block, its proof left as `sorry`."
)

_TACTICS = (
    "simp|linarith|nlinarith|omega|norm_num|ring_nf|ring|field_simp|positivity|decide|aesop|"
    "rw|rewrite|intro|intros|rintro|exact|apply|refine|constructor|cases|rcases|obtain|"
    "induction|use|calc|have|show|by_contra|contradiction|tauto|gcongr|polyrith|exact\\?"
)
_TACTIC_WORD = re.compile(rf"(`\s*({_TACTICS})\b|\btactics?\b|\bproof (step|script)s?\b)", re.I)
_FENCE = re.compile(r"```.*?(```|$)", re.S)


def strip_tactics(trace: str) -> str:
    """The trace without code blocks and without lines that talk about tactics or proofs."""
    text = _FENCE.sub("", trace)
    keep = [ln for ln in text.splitlines() if not _TACTIC_WORD.search(ln)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(keep)).strip()


class Review(StrEnum):
    """What a person said about a record's model-written statement, as the export carries it.

    A statement a person rejected (or replaced by an edit of their own) is never exported; one
    nobody has reviewed yet is exported marked `unreviewed`."""

    CONFIRMED = "confirmed"
    UNREVIEWED = "unreviewed"


class SFTRecord(BaseModel):
    """One SFT example with its provenance."""

    id: str
    informal: str
    formal: str  # the verified statement, proof `sorry`
    trace: str  # reconstructed reasoning, tactics stripped
    source: str  # where the informal statement came from
    licence: str
    passed_round: int | None = None
    model: str = ""  # the model that wrote the formal statement
    trace_model: str = ""  # the model that wrote the trace
    template: str = ""  # the reconstruction template id@version and hash
    run_id: int | None = None
    review: Review = Review.UNREVIEWED

    def messages(self) -> list[dict[str, str]]:
        """OpenAI chat messages: system, user (the statement), assistant (trace + Lean)."""
        answer = f"{self.trace}\n\n```lean\n{self.formal}\n```" if self.trace else self.formal
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": self.informal},
            {"role": "assistant", "content": answer},
        ]

    def sharegpt(self) -> list[dict[str, str]]:
        """ShareGPT conversations (`from`: system / human / gpt)."""
        names = {"system": "system", "user": "human", "assistant": "gpt"}
        return [{"from": names[m["role"]], "value": m["content"]} for m in self.messages()]


class RLPrompt(BaseModel):
    """One RL prompt: the statement, and the label the reward compares against (x itself)."""

    id: str
    prompt: list[dict[str, str]]
    label: str
    source: str
    licence: str
    review: Review = Review.UNREVIEWED


def sft_record(
    result: FormalizeResult, trace: str, *, source: str, licence: str, **prov
) -> SFTRecord:
    """An SFT record from a passed formalize result and its reconstructed trace."""
    if result.outcome is not Outcome.PASSED or not result.lean:
        raise ValueError(f"{result.id}: only passed items make SFT records")
    # drop the import header the loop prepended (the exact import lines: math2.lean's split);
    # `open` lines stay, they are part of what the statement means
    body = split_code(result.lean).body
    return SFTRecord(
        id=result.id,
        informal=result.statement,
        formal=statement_only(body),
        trace=strip_tactics(trace),
        source=source,
        licence=licence,
        passed_round=result.passed_round,
        **prov,
    )


_AMBIGUOUS = re.compile(r"\b(ambiguous|unclear|ill-posed|ill posed|undefined in the text)\b", re.I)


def _unambiguous(result: FormalizeResult) -> bool:
    if len(result.statement.split()) < 5:
        return False
    for r in result.rounds:
        for d in r.defects:
            if _AMBIGUOUS.search(d.clause or "") or _AMBIGUOUS.search(getattr(d, "note", "") or ""):
                return False
    return True


def rl_prompts(
    results: list[FormalizeResult], *, sources: dict[str, tuple[str, str]], max_rounds: int = 3
) -> list[RLPrompt]:
    """Items not passed within `max_rounds` rounds whose statement is unambiguous.

    `sources` maps an item id to (source, licence)."""
    out = []
    for r in results:
        passed_in_time = r.outcome is Outcome.PASSED and (r.passed_round or 0) <= max_rounds
        if passed_in_time or not _unambiguous(r):
            continue
        src, lic = sources.get(r.id, ("", ""))
        out.append(
            RLPrompt(
                id=r.id,
                prompt=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": r.statement},
                ],
                label=r.statement,
                source=src,
                licence=lic,
            )
        )
    return out
