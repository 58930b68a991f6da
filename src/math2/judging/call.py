"""Asking the judge: inside a run (an attempt of the item) or directly (the RL reward)."""

from __future__ import annotations

from typing import Any

from math2.judging.schemas import JudgeVerdict
from math2.llm import load_template
from math2.llm.structured import structured
from math2.llm.templates import Template
from math2.llm.types import Structured

#: The judge's prompt (its id and hash are part of every cached reply and attempt).
JUDGE_TEMPLATE = "formalize/judge"


def judge_template() -> Template:
    """The judge's template."""
    return load_template(JUDGE_TEMPLATE)


def _variables(informal: str, lean: str) -> dict[str, str]:
    return {"statement": informal, "lean": lean}


async def judge_in_run(
    ctx: Any, client: Any, informal: str, lean: str, *, stage: str, **params: Any
) -> tuple[Structured[JudgeVerdict], int]:
    """The judge's verdict on (informal, lean), recorded as an attempt of the run item `ctx`
    (a `math2.runs.ItemContext`); `params` are the call's (round, sample, max_tokens, …).
    Temperature 0 unless given."""
    params.setdefault("temperature", 0.0)
    return await ctx.structured(
        client, judge_template(), _variables(informal, lean), JudgeVerdict, stage=stage, **params
    )


async def judge(client: Any, informal: str, lean: str, **params: Any) -> Structured[JudgeVerdict]:
    """The judge's verdict outside a run (answered from the client's response cache)."""
    params.setdefault("temperature", 0.0)
    return await structured(
        client, judge_template().render(**_variables(informal, lean)), JudgeVerdict, **params
    )


def passed(out: Structured[JudgeVerdict]) -> bool | None:
    """True or False for a verdict that was read; None for one that could not be read (never a
    pass)."""
    return out.value.passed() if out.ok and out.value is not None else None
