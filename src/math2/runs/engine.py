"""The streaming executor: items move through a job's steps independently, each model call or
Lean check bounded by its own resource, with no barrier between stages.

At most `max_in_flight` items are open at once; the next input record is read only when one
finishes (back-pressure, flat memory). Each item's state is a `run_items` row (running → done or
failed, with the error and how many times it was started). A run killed at any moment and started
again skips every done item and replays the others from the caches, so no finished model call or
Lean check is repeated.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.runs.context import STAGE_SECONDS, ItemContext, stage_share
from math2.runs.queries import run_lock_name
from math2.runs.spec import Job
from math2.store.aio import AsyncStore
from math2.store.db import Store
from math2.store.lock import hold_lock
from math2.store.upsert import insert_ignore, upsert
from math2.store.work import ItemStatus, Run, RunItem, RunStatus
from math2.util.limits import Resource

log = logging.getLogger(__name__)


class ResourceState(BaseModel):
    """A resource at one moment."""

    capacity: int
    in_use: int
    waiting: int
    utilisation: float


class Progress(BaseModel):
    """A run at one moment, for progress displays."""

    run_id: int
    job: str
    total: int | None = None
    done: int = 0
    failed: int = 0
    running: int = 0
    skipped: int = 0
    duplicates: int = 0
    elapsed_s: float = 0.0
    items_per_s: float = 0.0
    eta_s: float | None = None  # at the rate so far; None before the first item finishes
    # Finished items by their result's outcome (passed, failed, no_lean, refused, …).
    outcomes: dict[str, int] = Field(default_factory=dict)
    retries: int = 0  # model calls sent again (HTTP errors, connection failures, timeouts)
    timeouts: int = 0  # model calls that timed out or lost their connection
    # each stage's share of the time items spent in model calls and Lean checks (0..1)
    stages: dict[str, float] = Field(default_factory=dict)
    resources: dict[str, ResourceState] = Field(default_factory=dict)
    finished: bool = False


class RunSummary(Progress):
    """How a run ended."""

    status: RunStatus = RunStatus.DONE


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def open_run(session: Session, job: Job, params: dict[str, Any] | None = None) -> int:
    """The id of the run of `job` (created, or the existing one to resume); marks it running."""
    key = {"job": job.name, "key": job.input_key, "spec_hash": job.spec_hash}
    insert_ignore(
        session,
        Run,
        {**key, "spec": job.spec, "params": params or {}, "stats": {}, "status": "running"},
    )
    run = session.scalars(
        select(Run).where(
            Run.job == job.name, Run.key == job.input_key, Run.spec_hash == job.spec_hash
        )
    ).one()
    run.status = RunStatus.RUNNING
    run.finished_at = None
    if params:
        run.params = {**(run.params or {}), **params}
    session.flush()
    return run.id


def _upsert_item(session: Session, values: dict[str, Any], update: tuple[str, ...]) -> None:
    """Insert a run item, or update the `update` columns of the existing one."""
    upsert(session, RunItem, values, keys=("run_id", "item"), update=update)


_START = ("status", "attempt_count", "error")
_END = ("status", "result", "error", "stage", "finished_at")


async def _aiter(records: Iterable[Any] | AsyncIterable[Any]):
    if isinstance(records, AsyncIterable):
        async for r in records:
            yield r
    else:
        for r in records:
            yield r


async def run_item(
    astore: Any,
    job: Job,
    run_id: int,
    rec: Any,
    count: int,
    resources: dict[str, Resource],
    services: dict[str, Any] | None,
) -> tuple[bool, Any]:
    """One item through the job's steps, its state written before and after: (done, value).

    Every executor runs items through this (the local one in its event loop, the Ray one in its
    worker tasks with a store that writes through the run's writer), so there is one code path.
    The write closures capture plain values only, so they can travel to another process.
    """
    item = str(rec.id)
    ctx = ItemContext(run_id, item, astore, resources, attempts_before=count, services=services)
    start = {
        "run_id": run_id,
        "item": item,
        "status": ItemStatus.RUNNING.value,
        "attempt_count": count + 1,
        "result": {},
        "error": None,
    }
    await astore.write(lambda s: _upsert_item(s, start, _START))
    cur: Any = rec
    error: str | None = None
    try:
        for st in job.steps:
            ctx.stage = st.spec.name
            cur = await st.fn(cur, ctx)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.debug("item %s failed", item, exc_info=True)
        error = f"{ctx.stage}: {type(exc).__name__}: {exc}"
    result = cur.model_dump(mode="json") if error is None and hasattr(cur, "model_dump") else {}
    status = ItemStatus.FAILED if error else ItemStatus.DONE
    end = {
        "run_id": run_id,
        "item": item,
        "status": status.value,
        "attempt_count": count + 1,
        "result": result,
        "error": error,
        "stage": ctx.stage,
        "finished_at": _now(),
    }
    await astore.write(lambda s: _upsert_item(s, end, _END))
    return error is None, cur


async def execute(
    store: Store | AsyncStore,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    *,
    resources: dict[str, Resource] | None = None,
    services: dict[str, Any] | None = None,
    max_in_flight: int | None = None,
    max_attempts: int = 3,
    params: dict[str, Any] | None = None,
    total: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    progress_every_s: float = 0.5,
    executor: str = "local",
    ray: Any = None,
    services_factory: Callable[[Any], dict[str, Any]] | None = None,
) -> RunSummary:
    """Run (or resume) `job` over `records`; return how it ended.

    `resources` are the limits items share (e.g. {"model": Resource("model", 8), "lean":
    Resource("lean", 4)}); `services` are runtime objects the steps find in `ctx.services`
    (clients, a checker, an index: not hashed into the spec). By default at most 2 × the
    resources' total capacity items are open at once.
    An item that raised is `failed` with its error and is tried again on resume while it has been
    started fewer than `max_attempts` times. `on_result(record, result)` sees each finished item.

    `executor="ray"` runs the same items on a Ray cluster (`ray`: `RayOptions`; the steps'
    services are built where they run by `services_factory(env)`; see `math2.runs.ray_exec`).
    """
    if executor == "ray":
        from math2.runs.ray_exec import RayOptions, execute_ray

        return await execute_ray(
            store.store if isinstance(store, AsyncStore) else store,
            job,
            records,
            options=ray or RayOptions(),
            services_factory=services_factory,
            resources=resources,
            max_attempts=max_attempts,
            params=params,
            total=total,
            on_progress=on_progress,
            on_result=on_result,
        )
    if executor != "local":
        raise ValueError(f"unknown executor {executor!r}: local or ray")
    own = not isinstance(store, AsyncStore)
    astore = AsyncStore(store) if own else store
    resources = resources or {}
    width = max_in_flight or max(4, 2 * sum(r.capacity for r in resources.values()))
    started = time.monotonic()
    prog = Progress(run_id=0, job=job.name, total=total)
    held = None
    try:
        run_id = await astore.write(lambda s: open_run(s, job, params))
        prog.run_id = run_id
        STAGE_SECONDS[run_id] = {}  # this execution's stage shares (a run id may recur: resume)
        # A live holder of `run:<id>` tells `runs list` a running run from a killed one; a
        # second process on the same run is refused (StoreLocked) rather than racing the first.
        lock = hold_lock(astore.store, run_lock_name(run_id), wait=False)
        await asyncio.to_thread(lock.__enter__)
        held = lock

        def prior_items(s: Session) -> dict[str, tuple[str, int]]:
            rows = s.execute(
                select(RunItem.item, RunItem.status, RunItem.attempt_count).where(
                    RunItem.run_id == run_id
                )
            )
            return {item: (status, count) for item, status, count in rows}

        prior = await astore.read(prior_items)
        gate = asyncio.Semaphore(width)
        tasks: set[asyncio.Task] = set()
        seen: set[str] = set()

        def snapshot(finished: bool = False) -> Progress:
            elapsed = time.monotonic() - started
            prog.elapsed_s = elapsed
            finished_items = prog.done + prog.failed
            prog.items_per_s = finished_items / elapsed if elapsed > 0 else 0.0
            left = (prog.total or 0) - finished_items - prog.skipped
            prog.eta_s = left / prog.items_per_s if prog.total and prog.items_per_s > 0 else None
            clients = {id(v): v for v in (services or {}).values() if hasattr(v, "usage")}
            usages = [v.usage for v in clients.values()]
            prog.retries = sum(getattr(u, "retries", 0) for u in usages)
            prog.timeouts = sum(getattr(u, "timeouts", 0) for u in usages)
            prog.finished = finished
            prog.stages = stage_share(run_id)
            prog.resources = {
                name: ResourceState(
                    capacity=r.capacity,
                    in_use=r.in_use,
                    waiting=r.waiting,
                    utilisation=r.utilisation(),
                )
                for name, r in resources.items()
            }
            return prog.model_copy(deep=True)

        async def ticker() -> None:
            while True:
                await asyncio.sleep(progress_every_s)
                if on_progress:
                    on_progress(snapshot())

        async def process(rec: Any, count: int) -> None:
            prog.running += 1
            try:
                ok, cur = await run_item(astore, job, run_id, rec, count, resources, services)
                if not ok:
                    prog.failed += 1
                    prog.outcomes["error"] = prog.outcomes.get("error", 0) + 1
                else:
                    prog.done += 1
                    outcome = str(getattr(cur, "outcome", "done"))
                    prog.outcomes[outcome] = prog.outcomes.get(outcome, 0) + 1
                    if on_result is not None:
                        on_result(rec, cur)
            finally:
                prog.running -= 1
                gate.release()

        tick = asyncio.create_task(ticker()) if on_progress else None
        try:
            async for rec in _aiter(records):
                await gate.acquire()
                item = str(rec.id)
                status, count = prior.get(item, (None, 0))
                if item in seen:
                    prog.duplicates += 1
                    gate.release()
                    continue
                seen.add(item)
                if status == ItemStatus.DONE or (
                    status == ItemStatus.FAILED and count >= max_attempts
                ):
                    prog.skipped += 1
                    gate.release()
                    continue
                t = asyncio.create_task(process(rec, count))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            while tasks:
                await asyncio.gather(*list(tasks))
        finally:
            if tick is not None:
                tick.cancel()
            for t in list(tasks):
                t.cancel()
        summary = RunSummary(**snapshot(finished=True).model_dump(), status=RunStatus.DONE)

        def finish(s: Session) -> None:
            run = s.get(Run, run_id)
            run.status = RunStatus.DONE
            run.finished_at = _now()
            run.stats = {
                **finished_stats(summary),
                "utilisation": {k: round(v.utilisation, 3) for k, v in summary.resources.items()},
            }

        await astore.write(finish)
        if on_progress:
            on_progress(summary)
        return summary
    finally:
        if held is not None:
            await asyncio.to_thread(held.__exit__, None, None, None)
        if own:
            await astore.aclose()


def finished_stats(summary: RunSummary) -> dict[str, Any]:
    """What a finished run records of its summary (every executor writes these)."""
    return {
        "done": summary.done,
        "failed": summary.failed,
        "skipped": summary.skipped,
        "duplicates": summary.duplicates,
        "elapsed_s": round(summary.elapsed_s, 3),
        "items_per_s": round(summary.items_per_s, 3),
    }
