"""The Ray executor: the same job, steps, run items and attempts as the local executor, on a
Ray cluster.

The driver reads the input, skips what the store says is finished (exactly as the local executor
does, so a driver killed with SIGKILL and started again resumes the same way), and sends the
other items to Ray tasks in batches of `batch_size`, at most `max_batches` at once (the next
record is read only when a batch comes back: back-pressure, flat memory). A task runs its items
through `engine.run_item` — the one code path — with a store whose writes go to the run's single
writer (`StoreWriter`) and a Lean backend that reaches its node's `LeanActor`. Model endpoints
stay outside the cluster. PostgreSQL only: a SQLite file cannot be read by other machines.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.pool import PoolConfig
from math2.runs.engine import (
    Progress,
    RunSummary,
    _aiter,
    _now,
    finished_stats,
    open_run,
    run_item,
)
from math2.runs.ray_actors import (
    NAMESPACE,
    ActorBackend,
    LeanActor,
    RemoteStore,
    StoreWriter,
    WorkerEnv,
    lean_actor_name,
    writer_name,
)
from math2.runs.spec import Job
from math2.store.db import Store
from math2.store.work import ItemStatus, Run, RunItem, RunStatus
from math2.util.limits import Resource

ServicesFactory = Callable[[WorkerEnv], dict[str, Any]]


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the store cannot be shared by a cluster."""


@dataclass
class RayOptions:
    """Where the cluster is and how work is cut up."""

    address: str | None = None  # None: a local cluster; "auto"; "ray://host:10001"
    batch_size: int = 32
    max_batches: int | None = None  # default: 4 per node
    lean: PoolConfig | None = None  # each node's Lean actor(s) own a pool like this; None: no Lean
    lean_actors_per_node: int = 1
    # CPUs a batch task reserves. Its items mostly wait on models and Lean (which run in the
    # Lean actors' REPLs and outside the cluster), so two tasks share a core: while one is
    # between batches (returning, starting the next) the other keeps its node's actors fed.
    task_cpus: float = 0.5
    actor_max_restarts: int = 8
    task_max_retries: int = 3
    init_kwargs: dict[str, Any] = field(default_factory=dict)


def require_ray():
    """The `ray` module, or a clear error naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(
            "--executor ray needs Ray: pip install 'math2[ray]' (or use --executor local)"
        ) from exc
    return ray


def check_store(store: Store) -> None:
    """Refuse a store that a cluster cannot share (SQLite: one file, one writer, one machine)."""
    if store.engine.dialect.name != "postgresql":
        raise RayUnavailable(
            f"--executor ray needs a PostgreSQL store (workers on other machines read it); "
            f"{store.name} is {store.engine.dialect.name}: give --store "
            "postgresql+psycopg://USER@HOST/DB or use --executor local"
        )


def connect(options: RayOptions):
    """Join (or start) the cluster; return the `ray` module."""
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(address=options.address, namespace=NAMESPACE, **options.init_kwargs)
    return ray


def ensure_lean_actors(ray, options: RayOptions) -> dict[str, Any]:
    """The long-lived Lean actors of every alive node (created when missing):
    {(node id, index): handle}."""
    actors = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        nid = node["NodeID"]
        for i in range(options.lean_actors_per_node):
            actors[nid, i] = _lean_actor(ray, options, nid, i)
    return actors


def _lean_actor(ray, options: RayOptions, nid: str, index: int):
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return (
        ray.remote(LeanActor)
        .options(
            name=lean_actor_name(nid, index),
            namespace=NAMESPACE,
            get_if_exists=True,
            lifetime="detached",
            max_restarts=options.actor_max_restarts,
            max_task_retries=-1,  # a check in flight when the actor died is sent again
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(nid, soft=False),
        )
        .remote(options.lean)
    )


def _run_batch(
    job: Job,
    run_id: int,
    batch: list[tuple[Any, int]],
    url: str,
    writer: Any,
    services_factory: ServicesFactory | None,
    capacities: dict[str, int],
    lean_actors: int,
) -> tuple[str, list[tuple[str, bool, Any]]]:
    """A Ray task: run a batch of items; (the node it ran on, [(item, done, value)]).

    The batch runs on the worker process's one long-lived event loop (its connections to the
    store stay open from one batch to the next).
    """
    import ray

    coro = _batch(job, run_id, batch, url, writer, services_factory, capacities, lean_actors)
    results = asyncio.run_coroutine_threadsafe(coro, _worker_loop()).result()
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


async def _batch(job, run_id, batch, url, writer, services_factory, capacities, lean_actors):
    import ray

    astore = RemoteStore(writer, url)
    backend = None
    if lean_actors:
        node = ray.get_runtime_context().get_node_id()
        backend = ActorBackend(
            [
                ray.get_actor(lean_actor_name(node, i), namespace=NAMESPACE)
                for i in range(lean_actors)
            ]
        )
    env = WorkerEnv(astore=astore, lean_backend=backend, store=astore.store, executor="ray")
    services = services_factory(env) if services_factory else {}
    resources = {n: Resource(n, c) for n, c in capacities.items()}
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

        async def one(rec: Any, count: int) -> tuple[str, bool, Any]:
            item = str(rec.id)
            st, c = now.get(item, (None, count))
            if st == ItemStatus.DONE:  # its value is in run_items; not rebuilt here
                return item, True, None
            ok, cur = await run_item(astore, job, run_id, rec, max(c, count), resources, services)
            return item, ok, cur

        return await asyncio.gather(*(one(r, c) for r, c in batch))
    finally:
        for svc in services.values():
            close = getattr(svc, "aclose", None)
            if close is not None:
                await close()
        await astore.aclose()


async def execute_ray(
    store: Store,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    *,
    options: RayOptions,
    services_factory: ServicesFactory | None = None,
    resources: dict[str, Resource] | None = None,
    max_attempts: int = 3,
    params: dict[str, Any] | None = None,
    total: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
) -> RunSummary:
    """Run (or resume) `job` over `records` on a Ray cluster; return how it ended.

    `services_factory(env)` builds the steps' services where they run (clients, a checker on
    `env.lean_backend` with `env.result_cache(...)`); `resources` give each task's limits by
    capacity. Everything else is as `execute`.
    """
    check_store(store)
    ray = connect(options)
    started = time.monotonic()
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
    actors = ensure_lean_actors(ray, options) if options.lean is not None else {}
    capacities = {n: r.capacity for n, r in (resources or {}).items()}
    width = options.max_batches or 4 * len(nodes)
    prog = Progress(run_id=0, job=job.name, total=total)
    info = {"executor": "ray", "nodes": nodes, "lean_actors": len(actors)}
    with store.session() as s:
        run_id = open_run(s, job, {**(params or {}), **info})
        prior = {
            i: (st, c)
            for i, st, c in s.execute(
                select(RunItem.item, RunItem.status, RunItem.attempt_count).where(
                    RunItem.run_id == run_id
                )
            )
        }
    prog.run_id = run_id
    writer = ensure_writer(ray, store)
    task = ray.remote(_run_batch).options(
        max_retries=options.task_max_retries, num_cpus=options.task_cpus
    )
    inflight: dict[asyncio.Future, list[tuple[Any, int]]] = {}
    seen: set[str] = set()
    per_node: dict[str, int] = {}  # items each node ran (a retried batch counts where it ended)

    async def drain(until: int) -> None:
        while len(inflight) > until:
            done, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                batch = inflight.pop(fut)
                recs = {str(r.id): r for r, _ in batch}
                node, results = fut.result()
                per_node[node] = per_node.get(node, 0) + len(results)
                for item, ok, cur in results:
                    if ok:
                        prog.done += 1
                        if on_result is not None and cur is not None:
                            on_result(recs[item], cur)
                    else:
                        prog.failed += 1
                prog.running -= len(batch)
                _tick()

    def submit(batch: list[tuple[Any, int]]) -> None:
        ref = task.remote(
            job,
            run_id,
            batch,
            store.url,
            writer,
            services_factory,
            capacities,
            options.lean_actors_per_node if actors else 0,
        )
        inflight[asyncio.wrap_future(ref.future())] = batch
        prog.running += len(batch)

    def _tick(finished: bool = False) -> Progress:
        prog.elapsed_s = time.monotonic() - started
        done = prog.done + prog.failed
        prog.items_per_s = done / prog.elapsed_s if prog.elapsed_s > 0 else 0.0
        prog.finished = finished
        if on_progress:
            on_progress(prog.model_copy(deep=True))
        return prog

    try:
        batch: list[tuple[Any, int]] = []
        async for rec in _aiter(records):
            item = str(rec.id)
            if item in seen:
                prog.duplicates += 1
                continue
            seen.add(item)
            status, count = prior.get(item, (None, 0))
            if status == ItemStatus.DONE or (status == ItemStatus.FAILED and count >= max_attempts):
                prog.skipped += 1
                continue
            batch.append((rec, count))
            if len(batch) >= options.batch_size:
                await drain(width - 1)
                submit(batch)
                batch = []
        if batch:
            await drain(width - 1)
            submit(batch)
        await drain(0)
        counts = await writer.counts.remote()
    finally:
        for fut in inflight:
            fut.cancel()
    summary = RunSummary(**_tick(finished=True).model_dump(), status=RunStatus.DONE)
    with store.session() as s:
        run = s.get(Run, run_id)
        run.status = RunStatus.DONE
        run.finished_at = _now()
        run.stats = {
            **finished_stats(summary),
            **info,
            "items_per_node": per_node,
            "writer": counts,
        }
    return summary


def ensure_writer(ray, store: Store):
    """The store's single writer (created on this node when missing)."""
    return (
        ray.remote(StoreWriter)
        .options(
            name=writer_name(store.url),
            namespace=NAMESPACE,
            get_if_exists=True,
            lifetime="detached",
            num_cpus=0,
            max_concurrency=1000,
            scheduling_strategy=_here(ray),
        )
        .remote(store.url)
    )


def _here(ray):
    """Schedule on the driver's node (the writer lives beside the driver)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    except Exception:  # a Ray Client driver has no node of its own
        return "DEFAULT"


def stop_actors(ray, store_urls: Iterable[str] = ()) -> int:
    """Kill every node's Lean actors and the writers of `store_urls` (they are detached: they
    outlive runs); how many there were."""
    n = 0
    for url in store_urls:
        try:
            ray.kill(ray.get_actor(writer_name(url), namespace=NAMESPACE), no_restart=True)
            n += 1
        except ValueError:
            pass
    for node in ray.nodes():
        for i in range(64):
            try:
                actor = ray.get_actor(lean_actor_name(node["NodeID"], i), namespace=NAMESPACE)
            except ValueError:
                break
            ray.kill(actor, no_restart=True)
            n += 1
    return n
