"""The two steps that draw one evaluation sample (`math2.eval.harness` runs them): `eval.sample`
asks the formalize role's generate template once, extracts the Lean block, checks it
(statement mode) and judges a compiled one under every judge; `eval.loop` runs the whole
formalize loop instead (refinement, no retrieval) and judges its final statement. A reply cut
off at its deadline, a block hygiene refused, or a Lean that could not decide is a failure
with its reason (`SampleFailure`); an unreadable verdict is `None`, never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from math2.eval.scoring import SampleFailure, SampleResult
from math2.judging import judge_in_run, passed
from math2.lean import CheckItem, Status
from math2.lean import Mode as LeanMode
from math2.lean.trust import ContextTrust
from math2.llm import load_template
from math2.llm.stream import TIMEOUT
from math2.roles.formalize import extract_lean
from math2.runs import ItemContext, step
from math2.services import RoleServices


class SampleTask(BaseModel):
    """One sample of one item, as a run record."""

    id: str
    benchmark: str
    version_hash: str
    item: str
    sample: int
    informal: str
    header: str = ""


@step("eval.sample")
def eval_sample(model: str, judges: list[str], temperature: float = 0.7, max_tokens: int = 2048):
    """Generate once, extract, compile, judge under every judge."""

    async def run(task: SampleTask, ctx: ItemContext[RoleServices]) -> SampleResult:
        services: RoleServices = ctx.services
        gen_t = load_template("formalize/generate")
        reply, _ = await ctx.chat(
            services.generator,
            gen_t,
            {"statement": task.informal, "hits": [], "previous": None, "feedback": "", "round": 1},
            stage="generate",
            round=1,
            sample=task.sample,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        lean, _dropped = extract_lean(reply.content)
        res = SampleResult(
            benchmark=task.benchmark,
            version_hash=task.version_hash,
            item=task.item,
            sample=task.sample,
            compiled=False,
            judges={j: None for j in judges},
            statement=lean or "",
        )
        if reply.finish_reason == TIMEOUT:  # cut off at its deadline: a failed sample
            return res.model_copy(
                update={
                    "failure": SampleFailure.TIMEOUT,
                    "error": "the model's reply was cut off at its deadline",
                }
            )
        if lean is None:
            return res.model_copy(update={"failure": SampleFailure.NO_LEAN})
        header = _header(services.header, task.header)
        check, _ = await ctx.lean(
            services.checker,
            CheckItem(
                id=task.id,
                code=header + "\n\n" + lean,
                mode=LeanMode.STATEMENT,
                trust=ContextTrust.GENERATED,
            ),
            round=1,
            sample=task.sample,
        )
        res = res.model_copy(update={"compiled_by": check.compiled_by})
        if not check.passed:
            failure = _lean_failure(check.status)
            error = (check.reason or "")[:2000] if failure is not None else ""
            return res.model_copy(update={"failure": failure, "error": error})
        verdicts = await _judge_all(ctx, judges, task.informal, lean, task.sample)
        return res.model_copy(update={"compiled": True, "judges": verdicts})

    return run


async def _judge_all(
    ctx: ItemContext[RoleServices], judges: list[str], informal: str, lean: str, sample: int
) -> dict[str, bool | None]:
    """Every judge's verdict on a sample (None: unreadable, never a pass)."""
    verdicts: dict[str, bool | None] = {}
    for j in judges:
        verdict, _ = await judge_in_run(
            ctx,
            ctx.services.client(j),
            informal,
            lean,
            stage=f"judge:{j}",
            round=1,
            sample=sample,
        )
        verdicts[j] = passed(verdict)
    return verdicts


@step("eval.loop")
def eval_loop(
    model: str,
    judges: list[str],
    max_rounds: int = 3,
    temperature: float = 0.7,
    max_tokens: int = 2048,
):
    """One sample through the whole formalize loop (compile and the first judge's feedback,
    at most `max_rounds` rounds); its final statement is then judged under every judge."""
    from math2.roles.formalize import FormalizeInput, formalize_loop

    loop = formalize_loop(
        model=model,
        judge=judges[0],
        max_rounds=max_rounds,
        retrieval=False,
        temperature=temperature,
        max_tokens=max_tokens,
    ).fn

    async def run(task: SampleTask, ctx: ItemContext[RoleServices]) -> SampleResult:
        # the loop refines on `ctx.services.judge`: the first of the judges (the spec's order)
        result = await loop(
            FormalizeInput(
                id=task.id,
                statement=task.informal,
                header="\n".join(
                    ln for ln in task.header.splitlines() if ln.strip().startswith("open ")
                )
                or None,
                sample=task.sample,
            ),
            ctx,
        )
        compiled = [r for r in result.rounds if r.compile_passed and r.lean]
        passed = [r for r in compiled if r.consistent]
        final = (passed or compiled or [None])[-1]
        res = SampleResult(
            benchmark=task.benchmark,
            version_hash=task.version_hash,
            item=task.item,
            sample=task.sample,
            compiled=final is not None,
            judges={j: None for j in judges},
            statement=final.lean if final is not None else "",
            compiled_by=next((r.compiled_by for r in reversed(result.rounds) if r.compiled_by), ""),
        )
        if final is None:
            return res.model_copy(update={"failure": _loop_failure(result.rounds)})
        verdicts = await _judge_all(ctx, judges, task.informal, final.lean, task.sample)
        return res.model_copy(update={"judges": verdicts})

    return run


def _lean_failure(status: Status) -> SampleFailure | None:
    """A statement hygiene refused, or a compile that Lean could not decide, is a failure with
    its reason; one Lean rejected is an ordinary miss (None)."""
    if status is Status.REJECTED:
        return SampleFailure.REFUSED
    if status is Status.TIMEOUT:
        return SampleFailure.LEAN_TIMEOUT
    if status in (Status.CRASH, Status.BACKEND_ERROR, Status.HEADER_ERROR):
        return SampleFailure.LEAN_UNAVAILABLE
    return None


def _loop_failure(rounds: Sequence[Any]) -> SampleFailure | None:
    """Why a loop sample with no compiled statement failed, from its last round: a reply cut
    off at its deadline, no Lean, a refusal or a Lean that could not decide (None: Lean
    rejected it, an ordinary miss)."""
    if not rounds:
        return SampleFailure.NO_LEAN
    last = rounds[-1]
    if last.lean is None:
        return SampleFailure.TIMEOUT if last.finish_reason == TIMEOUT else SampleFailure.NO_LEAN
    return _lean_failure(Status(last.compile_status)) if last.compile_status else None


def _header(base: str, item_header: str) -> str:
    """The trusted import header, plus the item's `open` lines (its imports are not taken)."""
    opens = [ln for ln in item_header.splitlines() if ln.strip().startswith("open ")]
    return "\n".join([base, *dict.fromkeys(opens)])
