"""The evaluation harness: k samples per benchmark item, compiled, judged, on `math2.runs`.

One run item is one (benchmark item, sample index), drawn by a step of `math2.eval.samples`: the
formalize role's generate template is asked once (single-shot, as MathForm's pass@k evaluation
does; the sample index is part of the LLM cache key, so the k samples are k different calls),
the Lean block is extracted and checked by `math2.lean` (hygiene first, statement mode), and a
compiled sample is judged by every judge with the formalize role's judge template (six defect
kinds). An unreadable verdict is `None`: never a pass. A reply cut off at its deadline is a
`timeout` failure, a block hygiene refused a `refused` one (`SampleFailure`). Results are
`SampleResult`s; `score` turns them into SC/CC pass@k.

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
from math2.eval.samples import SampleTask, eval_loop, eval_sample
from math2.eval.scoring import SampleResult
from math2.runs import CannotResume, Job, Progress, Resume, RunSummary, register_job
from math2.services import ServiceSpec, execute_role, resolve_spec
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
