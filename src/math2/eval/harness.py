"""The evaluation harness: k samples per benchmark item, compiled, judged, on `math2.runs`.

One run item is one (benchmark item, sample index): the formalize role's generate template is
asked once (single-shot, as MathForm's pass@k evaluation does; the sample index is part of the
LLM cache key, so the k samples are k different calls), the Lean block is extracted and checked
by `math2.lean` (hygiene first, statement mode), and a compiled sample is judged by every judge
with the formalize role's judge template (six defect kinds). An unreadable verdict is `None`:
never a pass. A reply cut off at its deadline is a `timeout` failure, a block hygiene refused a
`refused` one (`SampleFailure`). Results are `SampleResult`s; `score` turns them into SC/CC
pass@k.

The run is identified by the benchmark version hashes, k and the spec (model, judges, sampling
parameters), so it resumes after a kill without repeating a finished model call or Lean check,
and another model or judge set is another run side by side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from math2.config import Settings
from math2.eval.benchmarks import BenchmarkVersion
from math2.eval.results import collect_results, expected_samples
from math2.eval.scoring import SampleFailure, SampleResult
from math2.judging import judge_in_run, passed
from math2.lean import CheckItem, Status
from math2.lean import Mode as LeanMode
from math2.lean.trust import ContextTrust
from math2.llm import load_template
from math2.llm.stream import TIMEOUT
from math2.roles.formalize import extract_lean
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
from math2.util.limits import Resource

__all__ = [
    "EvalOptions",
    "SampleTask",
    "build_eval_job",
    "collect_results",
    "expected_samples",
    "run_eval",
]

if TYPE_CHECKING:
    from math2.runs.ray_exec import RayOptions

JOB = "eval"


class SampleTask(BaseModel):
    """One sample of one item, as a run record."""

    id: str
    benchmark: str
    version_hash: str
    item: str
    sample: int
    informal: str
    header: str = ""


class EvalOptions(BaseModel):
    """What an evaluation run is asked to do."""

    model: str
    judges: list[str]
    k: int = 8
    temperature: float = 0.7
    max_tokens: int = 2048
    limit: int | None = None  # first N items of each benchmark
    lean_backend: str | None = None
    loop: bool = False  # each sample through the full formalize loop (refinement, no retrieval)
    max_rounds: int = 3


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


def tasks_for(versions: Sequence[BenchmarkVersion], k: int, limit: int | None) -> list[SampleTask]:
    """k tasks per item of each version (the first `limit` items when given)."""
    out = []
    for v in versions:
        for it in v.items[:limit] if limit else v.items:
            for s in range(k):
                out.append(
                    SampleTask(
                        id=f"{v.name}/{it.name}/{s}",
                        benchmark=v.name,
                        version_hash=v.version_hash,
                        item=it.name,
                        sample=s,
                        informal=it.informal,
                        header=it.header,
                    )
                )
    return out


def build_eval_job(versions: Sequence[BenchmarkVersion], options: EvalOptions) -> Job:
    key = hashlib.sha256(
        "|".join(
            [
                *(f"{v.label}:{v.version_hash}" for v in versions),
                f"k={options.k}",
                f"limit={options.limit}",
            ]
        ).encode()
    ).hexdigest()
    if options.loop:
        st = eval_loop(
            model=options.model,
            judges=sorted(options.judges),
            max_rounds=options.max_rounds,
            temperature=options.temperature,
            max_tokens=options.max_tokens,
        )
    else:
        st = eval_sample(
            model=options.model,
            judges=sorted(options.judges),
            temperature=options.temperature,
            max_tokens=options.max_tokens,
        )
    return Job(JOB, key, [st])


async def run_eval(
    settings: Settings,
    store: Store,
    versions: Sequence[BenchmarkVersion],
    options: EvalOptions,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    ray: RayOptions | None = None,
    sources: dict[str, Any] | None = None,
    resume: Resume | None = None,
) -> tuple[RunSummary, list[SampleResult]]:
    """Run (or resume) an evaluation; the summary and every finished sample. On a Ray cluster
    when `ray` (a `RayOptions`) is given.

    `sources` (`benchmark_sources`) says where the benchmarks were read from; recorded in the
    run, it is how `math2 runs resume` finds them again."""
    if not options.judges:
        raise ValueError("at least one judge is needed for CC")
    spec = resolve_spec(
        settings,
        store,
        ServiceSpec(
            generator=options.model,
            judges=tuple(sorted(options.judges)),  # the loop refines on the first
            lean=True,
            lean_backend=options.lean_backend,
        ),
    )
    job = build_eval_job(versions, options)
    tasks = tasks_for(versions, options.k, options.limit)
    params = {
        "benchmarks": {v.label: v.version_hash for v in versions},
        "options": options.model_dump(mode="json"),
        "expected": expected_samples(versions, options.limit),
        **({"sources": sources} if sources else {}),
    }
    summary = await execute_role(
        settings,
        store,
        spec,
        job,
        tasks,
        resources=lambda limiter: {
            "model": limiter(options.model),
            "lean": Resource("lean", max(1, settings.lean.workers)),
        },
        ray=ray,
        params=params,
        total=len(tasks),
        on_progress=on_progress,
        resume=resume,
    )
    return summary, collect_results(store, summary.run_id)


def benchmark_sources(data: str | Path | None, harness: Iterable[str | Path] | None) -> dict:
    """Where an evaluation's benchmarks come from (absolute paths), as its run records it."""
    return {
        "data": str(Path(data).resolve()) if data is not None else None,
        "harness": [str(Path(h).resolve()) for h in harness or []],
    }


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    """The same benchmarks (same hashes, read again from where the run read them), the same
    options: done samples are skipped, finished calls and checks come from the caches."""
    from math2.eval.benchmarks import UnknownBenchmark, load_registry

    params = run.params or {}
    sources = params.get("sources")
    if not sources:
        raise CannotResume(
            f"run {run.id} did not record where its benchmarks came from: run `math2 eval run` "
            "again with the same benchmarks and options (it resumes the same run)"
        )
    reg = load_registry(sources.get("data"), sources.get("harness") or [])
    versions = []
    for label, version_hash in (params.get("benchmarks") or {}).items():
        try:
            v = reg.get(label)
        except UnknownBenchmark as exc:
            raise CannotResume(f"run {run.id}: benchmark {label} is gone ({exc})") from exc
        if v.version_hash != version_hash:
            raise CannotResume(
                f"run {run.id}: benchmark {label} has changed since the run started "
                f"(sha256 {version_hash[:12]} then, {v.version_hash[:12]} now)"
            )
        versions.append(v)
    options = EvalOptions.model_validate(params.get("options") or {})
    job = build_eval_job(versions, options)
    if job.input_key != run.key:
        raise CannotResume(f"run {run.id}: its benchmarks and options no longer make this run")
    summary, _ = await run_eval(  # a changed spec (another Lean, …) is the lifecycle's to refuse
        settings,
        store,
        versions,
        options,
        on_progress=resume.on_progress,
        ray=resume.ray,
        sources=sources,
        resume=resume,
    )
    return summary


register_job(JOB, _resume)
