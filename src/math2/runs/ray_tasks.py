"""What a Ray worker runs for the Ray executor: a batch task — its items through
`engine.run_item`, the one item path, on the worker process's long-lived event loop, with the
services built there by the run's factory, a store that writes through the run's `StoreWriter`
and the Lean backend of the node's `LeanActor`(s). The driver's side is `math2.runs.ray_exec`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.runs.context import RunServices
from math2.runs.engine import run_item
from math2.runs.lifecycle import End, ItemEnd
from math2.runs.ray_actors import NAMESPACE, ActorBackend, RemoteStore, WorkerEnv, lean_actor_name
from math2.runs.spec import Job
from math2.store.work import ItemStatus, RunItem
from math2.util.limits import Resource

S = TypeVar("S", bound=RunServices)
#: Builds a run's services where its steps run (a Ray worker; the driver, to ask what the run's
#: results come from): a module-level function or a functools.partial of one (it travels).
ServicesFactory = Callable[[WorkerEnv], S]


@dataclass(frozen=True)
class BatchTask:
    """What each batch task of a segment of a run needs beside its items (it travels with it)."""

    job: Job
    run_id: int
    segment_id: int
    url: str  # the store's, read by the workers
    writer: Any  # the store's `StoreWriter` actor
    services_factory: ServicesFactory[Any] | None
    capacities: dict[str, int]
    lean_actors: int  # per node; 0: the run checks nothing


def run_batch(
    task: BatchTask, batch: list[tuple[Any, int]]
) -> tuple[str, list[tuple[str, ItemEnd, Any]]]:
    """A Ray task: run a batch of items; (the node it ran on, [(item, how it ended, value)]).

    The batch runs on the worker process's one long-lived event loop (its connections to the
    store stay open from one batch to the next).
    """
    import ray

    results = asyncio.run_coroutine_threadsafe(_batch(task, batch), _worker_loop()).result()
    return ray.get_runtime_context().get_node_id(), results


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _worker_loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            _LOOP = asyncio.new_event_loop()
            threading.Thread(target=_LOOP.run_forever, name="math2-ray-loop", daemon=True).start()
        return _LOOP


def _node_backend(lean_actors: int) -> ActorBackend | None:
    """The Lean backend of this node's actor(s), or None for a run that checks nothing."""
    import ray

    if not lean_actors:
        return None
    node = ray.get_runtime_context().get_node_id()
    return ActorBackend(
        [ray.get_actor(lean_actor_name(node, i), namespace=NAMESPACE) for i in range(lean_actors)]
    )


async def _batch(task: BatchTask, batch: list[tuple[Any, int]]) -> list[tuple[str, ItemEnd, Any]]:
    run_id = task.run_id
    astore = RemoteStore(task.writer, task.url)
    backend = _node_backend(task.lean_actors)
    env = WorkerEnv(astore=astore, lean_backend=backend, store=astore.store, executor="ray")
    factory = task.services_factory
    services: RunServices = factory(env) if factory is not None else RunServices()
    resources = {n: Resource(n, c) for n, c in task.capacities.items()}
    ids = [str(rec.id) for rec, _ in batch]

    def states(s: Session) -> dict[str, tuple[str, int]]:
        rows = s.execute(
            select(RunItem.item, RunItem.status, RunItem.attempt_count).where(
                RunItem.run_id == run_id, RunItem.item.in_(ids)
            )
        )
        return {i: (st, c) for i, st, c in rows}

    try:
        # A task Ray retried (its worker died) skips what its first try finished.
        now = await astore.read(states)

        async def one(rec: Any, count: int) -> tuple[str, ItemEnd, Any]:
            item = str(rec.id)
            st, c = now.get(item, (None, count))
            if st == ItemStatus.DONE:  # its value is in run_items; not rebuilt here
                return item, ItemEnd(End.DONE), None
            end, cur = await run_item(
                astore, task.job, run_id, rec, max(c, count), resources, services, task.segment_id
            )
            return item, end, cur

        return list(await asyncio.gather(*(one(r, c) for r, c in batch)))
    finally:
        await services.aclose()
        await astore.aclose()
