"""The local executor: items move through a job's steps independently in this event loop, each
model call or Lean check bounded by its own resource, with no barrier between stages.

The run itself — its identity, the claim, what is skipped, how it ends — is
`math2.runs.lifecycle`'s, as on every executor; this module says only how items run here. At
most `max_in_flight` items are open at once; the next input record is read only when one
finishes (back-pressure, flat memory). Each item's state is a `run_items` row (running → done or
failed, with the error and how many times it was started). A run killed at any moment and started
again skips every done item and replays the others from the caches, so no finished model call or
Lean check is repeated. A step that meets a model endpoint that is down (`EndpointDown`) stops
the run: no item starts after it, the items not finished stay pending, and the run is `stopped`
with the endpoint as its reason.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from math2.llm.types import EndpointDown
from math2.runs.context import STAGE_SECONDS, ItemContext, RunServices, RunStore, stage_share
from math2.runs.identity import run_identity
from math2.runs.lifecycle import (
    ClaimedRun,
    End,
    Executor,
    ItemEnd,
    Resume,
    RunRequest,
    drive,
    record_end,
    record_pending,
    record_start,
)
from math2.runs.outcome import failure_reason
from math2.runs.progress import Progress, ResourceState, RunSummary
from math2.runs.spec import Job
from math2.store.aio import AsyncStore
from math2.store.db import Store
from math2.store.work import ItemStatus
from math2.util.limits import Resource

if TYPE_CHECKING:
    from math2.runs.ray_actors import WorkerEnv
    from math2.runs.ray_exec import RayOptions

log = logging.getLogger(__name__)

S = TypeVar("S", bound=RunServices)

__all__ = ["execute", "run_item"]


def _stopped_because(exc: EndpointDown) -> str:
    return f"model endpoint {exc.base_url} is down: {exc}"


async def run_item(
    astore: RunStore,
    job: Job,
    run_id: int,
    rec: Any,
    count: int,
    resources: dict[str, Resource],
    services: S,
    segment_id: int | None = None,
) -> tuple[ItemEnd, Any]:
    """One item through the job's steps, its state written before and after: (how its turn
    ended, its value).

    Every executor runs items through this (the local one in its event loop, the Ray one in its
    worker tasks with a store that writes through the run's writer), so there is one code path.
    The write closures capture plain values only, so they can travel to another process. An
    endpoint that is down (raised, or met by a step that carried on) leaves the item pending.
    """
    item = str(rec.id)
    ctx = ItemContext(run_id, item, astore, resources, services, count, segment_id)
    await astore.write(lambda s: record_start(s, run_id, item, count))
    cur: Any = rec
    error: str | None = None
    down: EndpointDown | None = None
    try:
        for st in job.steps:
            ctx.stage = st.spec.name
            cur = await st.fn(cur, ctx)
    except asyncio.CancelledError:
        raise
    except EndpointDown as exc:
        down = exc
    except Exception as exc:
        log.debug("item %s failed", item, exc_info=True)
        error = f"{ctx.stage}: {type(exc).__name__}: {exc}"
    down = down or ctx.endpoint_down
    if down is not None:
        await astore.write(lambda s: record_pending(s, run_id, item, count))
        return ItemEnd(End.STOPPED, stopped_because=_stopped_because(down)), None
    result = cur.model_dump(mode="json") if error is None and hasattr(cur, "model_dump") else {}
    status = ItemStatus.FAILED if error else ItemStatus.DONE
    stage = ctx.stage
    await astore.write(
        lambda s: record_end(
            s,
            run_id,
            item,
            attempt_count=count + 1,
            status=status,
            result=result,
            error=error,
            stage=stage,
        )
    )
    if error is not None:
        return ItemEnd(End.FAILED, failure=error), cur
    why = failure_reason(status.value, None, result)
    return ItemEnd(End.DONE, failure=why, outcome=str(getattr(cur, "outcome", "done"))), cur


async def execute(
    store: Store | AsyncStore,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    *,
    services: S | None = None,
    resources: dict[str, Resource] | None = None,
    max_in_flight: int | None = None,
    max_attempts: int = 3,
    params: dict[str, Any] | None = None,
    total: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    progress_every_s: float = 0.5,
    executor: str = "local",
    ray: RayOptions | None = None,
    services_factory: Callable[[WorkerEnv], S] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Run (or resume) `job` over `records`; return how it ended.

    `resources` are the limits items share (e.g. {"model": Resource("model", 8), "lean":
    Resource("lean", 4)}); `services` are the job's typed services the steps find in
    `ctx.services` (clients, a checker, an index: not hashed into the spec, but their
    `provenance()` — the Lean and the models — is part of the run's identity). By default at most
    2 × the resources' total capacity items are open at once. An item that raised is `failed`
    with its error and is tried again on resume while it has been started fewer than
    `max_attempts` times. `on_result(record, result)` sees each finished item. `resume` reopens
    the run it names (`math2 runs resume`), refusing a changed spec unless it allows one.

    `executor="ray"` runs the same items on a Ray cluster (`ray`: `RayOptions`; the steps'
    services are built where they run by `services_factory(env)`; see `math2.runs.ray_exec`).
    Raises `RunHeld` (another live driver holds the run), `SpecChanged` or `CannotResume` before
    any item runs.
    """
    request = RunRequest(
        params=params or {},
        resume=resume,
        max_attempts=max_attempts,
        total=total,
        on_progress=on_progress,
        on_result=on_result,
    )
    if executor == "ray":
        from math2.runs.ray_exec import RayOptions, execute_ray

        return await execute_ray(
            store.store if isinstance(store, AsyncStore) else store,
            job,
            records,
            options=ray or RayOptions(),
            services_factory=services_factory,
            resources=resources,
            request=request,
        )
    if executor != "local":
        raise ValueError(f"unknown executor {executor!r}: local or ray")
    astore = store if isinstance(store, AsyncStore) else AsyncStore(store)
    try:
        svc: RunServices = services if services is not None else RunServices()
        identity = run_identity(job, await svc.provenance())
        async with drive(astore.store, identity, executor=Executor(), request=request) as run:
            return await _run_here(
                run, astore, job, records, svc, resources or {}, max_in_flight, progress_every_s
            )
    finally:
        if astore is not store:
            await astore.aclose()


async def _run_here(
    run: ClaimedRun,
    astore: AsyncStore,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    services: RunServices,
    resources: dict[str, Resource],
    max_in_flight: int | None,
    progress_every_s: float,
) -> RunSummary:
    """The local executor's part of a claimed run: its items in this event loop."""
    width = max_in_flight or max(4, 2 * sum(r.capacity for r in resources.values()))
    run_id = run.run_id
    STAGE_SECONDS[run_id] = {}  # this execution's stage shares (a run id may recur: resume)
    gate = asyncio.Semaphore(width)
    tasks: set[asyncio.Task[None]] = set()

    def snapshot(finished: bool = False) -> Progress:
        p = run.progress
        p.retries, p.timeouts = services.call_counts()
        p.stages = stage_share(run_id)
        p.resources = {
            name: ResourceState(
                capacity=r.capacity,
                in_use=r.in_use,
                waiting=r.waiting,
                utilisation=r.utilisation(),
            )
            for name, r in resources.items()
        }
        return run.snapshot(finished)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(progress_every_s)
            if run.on_progress:
                run.on_progress(snapshot())

    async def process(rec: Any, count: int) -> None:
        run.begin()
        try:
            end, cur = await run_item(
                astore, job, run_id, rec, count, resources, services, run.segment_id
            )
            run.end(rec, end, cur)
        finally:
            gate.release()

    tick = asyncio.create_task(ticker()) if run.on_progress else None
    try:
        async for rec, count in run.pending(records):
            await gate.acquire()  # the next record is read once an item finished
            if run.halted:  # an item stopped the run while this one waited
                gate.release()
                break
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
    snapshot(finished=True)
    ended = run.progress.done + run.progress.failed
    return await run.finish(
        {
            "utilisation": {k: round(r.utilisation(), 3) for k, r in resources.items()},
            "items_per_node": {socket.gethostname(): ended} if ended else {},
        }
    )
