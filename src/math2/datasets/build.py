"""A dataset from a formalize run: trajectory reconstruction on `math2.runs`, then export.

Each passed item of the run gets a reasoning trace written by `trace_model` from the informal
statement and the final verified statement only (template `datasets/reconstruct`; the rounds,
compiler messages and retrieval context are never shown to it), with tactics stripped. Items not
passed within 3 rounds whose statement is unambiguous become RL prompts. The run is resumable
and cached like every other (job `datasets.reconstruct`, keyed by the formalize run and its
finished results).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import select

from math2.config import Settings
from math2.datasets.export import ExportSummary, export_dataset
from math2.datasets.records import Review, rl_prompts, sft_record, statement_only, strip_tactics
from math2.errors import Math2Error
from math2.eval import Registry
from math2.llm import LLMClient, load_template, make_client, require_model
from math2.roles.formalize import FormalizeResult, Outcome
from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Progress,
    Provenance,
    Resume,
    RunServices,
    RunSummary,
    execute,
    register_job,
    step,
)
from math2.store import Store
from math2.store.aio import AsyncStore
from math2.store.work import AgentText, AgentTextKind, ReviewStatus, Run, RunItem

__all__ = ["TraceTask", "build_dataset", "formalize_results", "review_states"]

JOB = "datasets.reconstruct"


class TraceTask(BaseModel):
    id: str
    statement: str
    lean: str


class Trace(BaseModel):
    id: str
    trace: str


@dataclass
class TracerServices(RunServices):
    """What the reconstruct step calls: the trace model's client (`model`: its name in the
    register, `revision`: its registered revision, named in the run's spec)."""

    tracer: LLMClient
    model: str
    revision: str = ""

    async def provenance(self) -> Provenance:
        return Provenance(models={self.model: self.revision})

    async def aclose(self) -> None:
        await self.tracer.aclose()


@step("datasets.reconstruct")
def reconstruct(model: str, temperature: float = 0.3, max_tokens: int = 1024):
    """Ask the trace model for the reasoning from input and output only; strip tactics."""

    async def run(task: TraceTask, ctx: ItemContext[TracerServices]) -> Trace:
        reply, _ = await ctx.chat(
            ctx.services.tracer,
            load_template("datasets/reconstruct"),
            {"statement": task.statement, "lean": task.lean},
            stage="reconstruct",
            temperature=temperature,
            max_tokens=max_tokens,
        )
        return Trace(id=task.id, trace=strip_tactics(reply.content))

    return run


def formalize_results(store: Store, run_id: int) -> tuple[Run, list[FormalizeResult]]:
    """The finished results of a formalize run."""
    with store.session() as s:
        run = s.get(Run, run_id)
        if run is None or run.job != "formalize":
            raise Math2Error(f"run {run_id} is not a formalize run (see `math2 runs list`)")
        rows = s.scalars(
            select(RunItem).where(RunItem.run_id == run_id, RunItem.status == "done")
        ).all()
        s.expunge(run)
        return run, [FormalizeResult.model_validate(r.result) for r in rows if r.result]


def review_states(store: Store, run_id: int) -> dict[str, ReviewStatus]:
    """item -> the review status of the formal statement the run wrote for it (the most severe
    when there are several: rejected, then edited, then pending, then confirmed)."""
    order = [ReviewStatus.REJECTED, ReviewStatus.EDITED, ReviewStatus.PENDING]
    out: dict[str, ReviewStatus] = {}
    with store.session() as s:
        rows = s.execute(
            select(AgentText.item, AgentText.status).where(
                AgentText.run_id == run_id,
                AgentText.kind == AgentTextKind.FORMAL_STATEMENT.value,
            )
        )
        for item, status in rows:
            st = ReviewStatus(status)
            prev = out.get(item)
            rank = {x: i for i, x in enumerate(order)}
            if prev is None or rank.get(st, len(order)) < rank.get(prev, len(order)):
                out[item] = st
    return out


def _review(state: ReviewStatus | None) -> Review | None:
    """The export's mark for a review state; None: not exported (rejected, or edited by a
    person, so the model's text is not what they accepted)."""
    if state in (ReviewStatus.REJECTED, ReviewStatus.EDITED):
        return None
    return Review.CONFIRMED if state is ReviewStatus.CONFIRMED else Review.UNREVIEWED


async def build_dataset(
    settings: Settings,
    store: Store,
    run_id: int,
    folder: str | Path,
    *,
    trace_model: str,
    source: str,
    licence: str,
    registry: Registry,
    provenance: str = "",
    benchmarks_dir: str | Path | None = None,
    expect_key: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_run: Callable[[RunSummary], None] | None = None,
    resume: Resume | None = None,
) -> ExportSummary:
    """Reconstruct traces for a formalize run's passed items and export SFT + RL data.

    `benchmarks_dir` (the folder `registry` was read from), recorded in the reconstruct run,
    lets `math2 runs resume` finish the same dataset (`expect_key`: the run it resumes;
    `on_run` sees how the reconstruct run ended)."""
    run, results = formalize_results(store, run_id)
    if not results:
        raise Math2Error(f"run {run_id} has no finished items")
    with store.session() as s:
        revision = require_model(s, trace_model).revision or ""
    gen_model = ((run.params or {}).get("options") or {}).get("model", "")
    states = review_states(store, run_id)
    marks = {r.id: _review(states.get(r.id)) for r in results}
    results = [r for r in results if marks[r.id] is not None]  # a person rejected it
    passed = [r for r in results if r.outcome is Outcome.PASSED and r.lean]
    tasks = [TraceTask(id=r.id, statement=r.statement, lean=statement_only(r.lean)) for r in passed]
    key = hashlib.sha256(
        json.dumps([run_id, sorted(t.model_dump_json() for t in tasks)]).encode()
    ).hexdigest()
    if expect_key is not None and key != expect_key:
        raise CannotResume(
            f"formalize run {run_id}'s results or reviews have changed since the dataset run "
            "started: build the dataset again (`math2 datasets build`)"
        )
    traces: dict[str, str] = {}
    job = Job(JOB, key, [reconstruct(model=trace_model)])
    rebuild = {
        "folder": str(Path(folder).resolve()),
        "trace_model": trace_model,
        "source": source,
        "licence": licence,
        "provenance": provenance,
        "benchmarks_dir": str(Path(benchmarks_dir).resolve()) if benchmarks_dir else None,
    }
    if tasks:
        astore = AsyncStore(store)
        services = TracerServices(make_client(settings, trace_model, astore), trace_model, revision)
        try:
            run_summary = await execute(
                astore,
                job,
                tasks,
                resources={"model": services.tracer.limiter},
                services=services,
                params={"formalize_run": run_id, "export": rebuild},
                total=len(tasks),
                on_progress=on_progress,
                on_result=lambda _rec, res: traces.__setitem__(res.id, res.trace),
                resume=resume,
            )
            if on_run is not None:
                on_run(run_summary)
        finally:
            await services.aclose()
            await astore.aclose()
        with store.session() as s:
            rec_run = run_summary.run_id
            for row in s.scalars(select(RunItem).where(RunItem.run_id == rec_run)):
                if row.status == "done" and row.result:
                    traces.setdefault(row.item, row.result.get("trace", ""))
    t = load_template("datasets/reconstruct")
    sft = [
        sft_record(
            r,
            traces[r.id],
            source=source,
            licence=licence,
            model=gen_model,
            trace_model=trace_model,
            template=f"{t.ref} sha256:{t.hash}",
            run_id=run_id,
            review=marks[r.id],
        )
        for r in passed
        if r.id in traces
    ]
    rl = [
        p.model_copy(update={"review": marks[p.id]})
        for p in rl_prompts(results, sources={r.id: (source, licence) for r in results})
    ]
    prov = provenance or f"math2 formalize run {run_id}"
    leans = sorted({lg.compiled_by for r in passed for lg in r.rounds if lg.compiled_by})
    prov += f"; compiled by: {'; '.join(leans) or 'nothing reached Lean'}"
    return export_dataset(folder, sft, rl, registry=registry, provenance={source: prov})


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    """The same formalize run, trace model and export as recorded: finished traces are skipped
    (their replies come from the cache), the rest are asked, and the dataset is written."""
    resume.local_only(JOB)
    from math2.eval import shared_registry

    params = run.params or {}
    export = params.get("export")
    if not export or not export.get("benchmarks_dir"):
        raise CannotResume(
            f"run {run.id} did not record its export (folder, benchmarks): run `math2 datasets "
            "build` again with the same options (it resumes the same run)"
        )
    data = Path(export["benchmarks_dir"])
    if not data.is_dir():
        raise CannotResume(f"run {run.id}: its benchmark folder {data} is gone")
    ended: list[RunSummary] = []
    await build_dataset(
        settings,
        store,
        int(params["formalize_run"]),
        export["folder"],
        trace_model=export["trace_model"],
        source=export["source"],
        licence=export["licence"],
        registry=shared_registry(data),
        provenance=export.get("provenance", ""),
        benchmarks_dir=data,
        expect_key=run.key,
        on_progress=resume.on_progress,
        on_run=ended.append,
        resume=resume,
    )
    if not ended:
        raise CannotResume(f"run {run.id}: its formalize run has no passed items left")
    return ended[0]


register_job(JOB, _resume)
