"""`run_align`: the align role over candidate crosswalk rows, one registered job on math2.runs.

Each pair is judged by a registered model through the versioned `align/judge` template, as a
structured verdict (`same` / `implies` / `related` / `different`, reasons, differing clauses).
A `same` verdict turns the candidate row into an accepted edge whose `extra["align"]` names the
dataset that proposed it, the model, the template (id and hash), the run and the attempt, and
proposes a binding (status `proposed`, for review). Any other verdict leaves the row a candidate
with the verdict and its reasons; an unreadable answer leaves it a candidate too, marked
unjudged: nothing becomes an edge without a verdict. Resumable: `math2 runs resume ID`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.config import Settings
from math2.llm import load_template
from math2.roles.align.lifecycle import propose_binding
from math2.roles.align.schemas import (
    AlignOutcome,
    AlignPair,
    AlignResult,
    AlignVerdict,
    Direction,
    EdgeDirection,
    EdgeRelation,
    Relation,
)
from math2.roles.align.sides import lean_mention, pair_of
from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Progress,
    Resume,
    RunSummary,
    register_job,
    step,
)
from math2.services import RoleServices, ServiceSpec, execute_role, resolve_spec
from math2.store import Run, Store
from math2.store.models import BindingOrigin, Crosswalk, Source

JOB = "align"
TEMPLATE = "align/judge"
OUTCOME_OF = {Relation.SAME: AlignOutcome.ACCEPTED, Relation.IMPLIES: AlignOutcome.IMPLIES}
# The node is the pair's left side, the declaration its right side.
EDGE_DIRECTION = {
    Direction.LEFT_IMPLIES_RIGHT: EdgeDirection.NODE_IMPLIES_TARGET,
    Direction.RIGHT_IMPLIES_LEFT: EdgeDirection.TARGET_IMPLIES_NODE,
}


class AlignOptions(BaseModel):
    """What an align run is asked to do."""

    model: str
    dataset: str | None = None  # only candidates this source proposed
    limit: int | None = None
    temperature: float = 0.0
    max_tokens: int = 768


def select_candidates(s: Session, options: AlignOptions) -> list[int]:
    """Ids of candidate rows not yet judged by this model with this template."""
    tpl = load_template(TEMPLATE)
    q = select(Crosswalk).where(Crosswalk.status == "candidate").order_by(Crosswalk.id)
    if options.dataset:
        src = s.scalar(select(Source.id).where(Source.name == options.dataset))
        if src is None:
            from math2.errors import Math2Error

            raise Math2Error(f"no source named {options.dataset!r} in the store")
        q = q.where(Crosswalk.source_id == src)
    ids: list[int] = []
    for cw in s.scalars(q):
        done = (cw.extra or {}).get("align") or {}
        if done.get("model") == options.model and done.get("template_hash") == tpl.hash:
            continue
        ids.append(cw.id)
        if options.limit is not None and len(ids) >= options.limit:
            break
    return ids


def input_key(ids: list[int]) -> str:
    """The run's input key: the digest of the candidate ids."""
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()


@step("align.judge")
def align_judge(model: str, temperature: float = 0.0, max_tokens: int = 768):
    """Ask the judge for a structured verdict on one pair (an attempt row, cached)."""
    template = load_template(TEMPLATE)

    async def run(pair: AlignPair, ctx: ItemContext[RoleServices]) -> AlignResult:
        client = ctx.services.judge
        variables = {
            "left_system": pair.left.system,
            "left_name": pair.left.name,
            "left": pair.left.text,
            "right_system": pair.right.system,
            "right_name": pair.right.name,
            "right": pair.right.text,
            "context": pair.right.context,
        }
        out, aid = await ctx.structured(  # the client holds the model's slot
            client,
            template,
            variables,
            AlignVerdict,
            stage="align",
            temperature=temperature,
            max_tokens=max_tokens,
        )
        if not out.ok or out.value is None:
            return AlignResult(
                id=pair.id,
                crosswalk_id=pair.crosswalk_id,
                dataset=pair.dataset,
                outcome=AlignOutcome.UNJUDGED,
                error=out.error or "no verdict",
                attempt_id=aid,
            )
        v = out.value
        return AlignResult(
            id=pair.id,
            crosswalk_id=pair.crosswalk_id,
            dataset=pair.dataset,
            outcome=OUTCOME_OF.get(v.verdict, AlignOutcome.REJECTED),
            verdict=v,
            attempt_id=aid,
        )

    return run


def record_verdict(
    s: Session, run_id: int, model: str, result: AlignResult, dataset: str
) -> int | None:
    """Write a judged pair into its crosswalk row; idempotent. `same`: a same_as edge and a
    proposed binding; `implies`: an implies edge with its direction; else a candidate."""
    cw = s.get(Crosswalk, result.crosswalk_id)
    if cw is None:
        return None
    tpl = load_template(TEMPLATE)
    note: dict[str, Any] = {
        "outcome": result.outcome.value,
        "dataset": dataset,
        "model": model,
        "template": tpl.ref,
        "template_hash": tpl.hash,
        "run": run_id,
        "attempt": result.attempt_id,
    }
    if result.verdict is not None:
        note |= {
            "verdict": result.verdict.verdict.value,
            "reasons": result.verdict.reasons,
            "differing_clauses": result.verdict.differing_clauses,
        }
    else:
        note["reasons"] = result.error or "no verdict"
    cw.extra = {**(cw.extra or {}), "align": note}
    if result.outcome is AlignOutcome.IMPLIES and result.verdict is not None:
        direction = EDGE_DIRECTION[result.verdict.direction]  # the schema requires one
        note["direction"] = direction.value
        cw.status, cw.relation = "accepted", EdgeRelation.IMPLIES.value
        cw.extra = {**cw.extra, "align": note, "direction": direction.value}
        m = lean_mention(s, cw.system, cw.target, cw.mention_id)
        cw.mention_id = m.id if m is not None else cw.mention_id
        return None  # an implies edge binds nothing
    if result.outcome is not AlignOutcome.ACCEPTED:
        return None  # stays a candidate, with its reason
    cw.status, cw.relation = "accepted", EdgeRelation.SAME_AS.value
    m = lean_mention(s, cw.system, cw.target, cw.mention_id)
    if m is None:
        return None
    cw.mention_id = m.id
    if cw.system != "lean4":
        return None  # an edge to another system's declaration: a binding is a Lean one
    binding = propose_binding(
        s, cw.node_id, BindingOrigin.ALIGN, mention_id=m.id, attempt_id=result.attempt_id
    )
    return binding.id


@step("align.record")
def align_record(model: str):
    """Write each verdict to the store: accepted → edge + proposed binding, else a candidate."""

    async def run(result: AlignResult, ctx: ItemContext[RoleServices]) -> AlignResult:
        run_id = ctx.run_id  # plain values: the closure may travel (Ray)
        bid = await ctx.astore.write(
            lambda s: record_verdict(s, run_id, model, result, result.dataset)
        )
        return result.model_copy(update={"binding_id": bid})

    return run


def build_job(options: AlignOptions, key: str) -> Job:
    """The align job for these options over a set of candidates."""
    return Job(
        JOB,
        key,
        [
            align_judge(
                model=options.model,
                temperature=options.temperature,
                max_tokens=options.max_tokens,
            ),
            align_record(model=options.model),
        ],
    )


async def run_align(
    settings: Settings,
    store: Store,
    options: AlignOptions,
    *,
    ids: list[int] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Judge the candidate rows `ids` (default: those `options` select), or resume that run."""
    spec = resolve_spec(settings, store, ServiceSpec(judges=(options.model,)))
    with store.session() as s:
        if ids is None:
            ids = select_candidates(s, options)
        pairs = [pair_of(s, cw) for i in ids if (cw := s.get(Crosswalk, i)) is not None]
    return await execute_role(
        settings,
        store,
        spec,
        build_job(options, input_key(ids)),
        pairs,
        resources=lambda limiter: {"model": limiter(options.model)},
        params={"crosswalk_ids": ids, "options": options.model_dump(mode="json")},
        total=len(pairs),
        on_progress=on_progress,
        on_result=on_result,
        resume=resume,
    )


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    resume.local_only(JOB)
    params = run.params or {}
    ids = params.get("crosswalk_ids")
    if ids is None:
        raise CannotResume(f"run {run.id}: it recorded no candidate ids")
    options = AlignOptions.model_validate(params.get("options", {}))
    return await run_align(
        settings, store, options, ids=list(ids), on_progress=resume.on_progress, resume=resume
    )


register_job(JOB, _resume)
