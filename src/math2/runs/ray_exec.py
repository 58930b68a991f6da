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
from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.pool import PoolConfig
from math2.runs.context import RunServices
from math2.runs.engine import run_item
from math2.runs.identity import Provenance, run_identity
from math2.runs.lifecycle import ClaimedRun, End, Executor, ItemEnd, Resume, drive
from math2.runs.progress import Progress, RunSummary
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
from math2.store.aio import AsyncStore
from math2.store.db import Store
from math2.store.work import ItemStatus, RunItem
from math2.util.limits import Resource

S = TypeVar("S", bound=RunServices)
#: Builds a run's services where its steps run (a Ray worker; the driver, to ask what the run's
#: results come from): a module-level function or a functools.partial of one (it travels).
ServicesFactory = Callable[[WorkerEnv], S]


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


def require_ray() -> Any:
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
            f"{store.name} is {store.engine.dialect.name}: give --db "
            "postgresql+psycopg://USER@HOST/DB or use --executor local"
        )


def connect(options: RayOptions) -> Any:
    """Join (or start) the cluster; return the `ray` module."""
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(address=options.address, namespace=NAMESPACE, **options.init_kwargs)
    return ray


def ensure_lean_actors(ray: Any, options: RayOptions) -> dict[tuple[str, int], Any]:
    """The long-lived Lean actors of every alive node (created when missing):
    {(node id, index): handle}."""
    actors: dict[tuple[str, int], Any] = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        nid = node["NodeID"]
        for i in range(options.lean_actors_per_node):
            actors[nid, i] = _lean_actor(ray, options, nid, i)
    return actors


def _lean_actor(ray: Any, options: RayOptions, nid: str, index: int) -> Any:
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
    segment_id: int,
    batch: list[tuple[Any, int]],
    url: str,
    writer: Any,
    services_factory: ServicesFactory[Any] | None,
    capacities: dict[str, int],
    lean_actors: int,
) -> tuple[str, list[tuple[str, ItemEnd, Any]]]:
    """A Ray task: run a batch of items; (the node it ran on, [(item, how it ended, value)]).

    The batch runs on the worker process's one long-lived event loop (its connections to the
    store stay open from one batch to the next).
    """
    import ray

    coro = _batch(
        job, run_id, segment_id, batch, url, writer, services_factory, capacities, lean_actors
    )
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


def _node_backend(lean_actors: int) -> ActorBackend | None:
    """The Lean backend of this node's actor(s), or None for a run that checks nothing."""
    import ray

    if not lean_actors:
        return None
    node = ray.get_runtime_context().get_node_id()
    return ActorBackend(
        [ray.get_actor(lean_actor_name(node, i), namespace=NAMESPACE) for i in range(lean_actors)]
    )


async def _batch(
    job: Job,
    run_id: int,
    segment_id: int,
    batch: list[tuple[Any, int]],
    url: str,
    writer: Any,
    services_factory: ServicesFactory[Any] | None,
    capacities: dict[str, int],
    lean_actors: int,
) -> list[tuple[str, ItemEnd, Any]]:
    astore = RemoteStore(writer, url)
    env = WorkerEnv(
        astore=astore, lean_backend=_node_backend(lean_actors), store=astore.store, executor="ray"
    )
    services: RunServices = services_factory(env) if services_factory else RunServices()
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

        async def one(rec: Any, count: int) -> tuple[str, ItemEnd, Any]:
            item = str(rec.id)
            st, c = now.get(item, (None, count))
            if st == ItemStatus.DONE:  # its value is in run_items; not rebuilt here
                return item, ItemEnd(End.DONE), None
            end, cur = await run_item(
                astore, job, run_id, rec, max(c, count), resources, services, segment_id
            )
            return item, end, cur

        return list(await asyncio.gather(*(one(r, c) for r, c in batch)))
    finally:
        await services.aclose()
        await astore.aclose()


async def _provenance(
    ray: Any,
    store: Store,
    actors: dict[tuple[str, int], Any],
    services_factory: ServicesFactory[Any] | None,
) -> Provenance:
    """What the run's results come from, asked on the driver of the services the workers will
    build (their Lean through a node's Lean actor): part of the run's identity."""
    if services_factory is None:
        return Provenance()
    here = _node_id(ray)
    mine = [a for (node, _), a in sorted(actors.items()) if node == here]
    backend = ActorBackend(mine or [a for _, a in sorted(actors.items())][:1]) if actors else None
    astore = AsyncStore(store)
    services: RunServices = services_factory(
        WorkerEnv(astore=astore, lean_backend=backend, store=store, executor="ray")
    )
    try:
        return await services.provenance()
    finally:
        await services.aclose()
        await astore.aclose()


def _node_id(ray: Any) -> str | None:
    try:
        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # a Ray Client driver has no node of its own
        return None


async def execute_ray(
    store: Store,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    *,
    options: RayOptions,
    services_factory: ServicesFactory[Any] | None = None,
    resources: dict[str, Resource] | None = None,
    max_attempts: int = 3,
    params: dict[str, Any] | None = None,
    total: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Run (or resume) `job` over `records` on a Ray cluster; return how it ended.

    `services_factory(env)` builds the steps' services where they run (clients, a checker on
    `env.lean_backend` with `env.result_cache(...)`); `resources` give each task's limits by
    capacity. The run's lifecycle (identity, lease, skipping, segments, how it ends) is
    `math2.runs.lifecycle`'s, as on the local executor. Everything else is as `execute`.
    """
    check_store(store)
    ray = connect(options)
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
    actors = ensure_lean_actors(ray, options) if options.lean is not None else {}
    identity = run_identity(job, await _provenance(ray, store, actors, services_factory))
    async with drive(
        store,
        identity,
        executor=Executor("ray", options.address),
        params=params,
        resume=resume,
        max_attempts=max_attempts,
        total=total,
        on_progress=on_progress,
        on_result=on_result,
    ) as run:
        return await _run_on_cluster(
            run, ray, store, job, records, options, nodes, actors, services_factory, resources
        )


async def _run_on_cluster(
    run: ClaimedRun,
    ray: Any,
    store: Store,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    options: RayOptions,
    nodes: list[str],
    actors: dict[tuple[str, int], Any],
    services_factory: ServicesFactory[Any] | None,
    resources: dict[str, Resource] | None,
) -> RunSummary:
    """The Ray executor's part of a claimed run: batches of its items on the cluster."""
    capacities = {n: r.capacity for n, r in (resources or {}).items()}
    width = options.max_batches or 4 * len(nodes)
    writer = ensure_writer(ray, store)
    task = ray.remote(_run_batch).options(
        max_retries=options.task_max_retries, num_cpus=options.task_cpus
    )
    inflight: dict[asyncio.Future[Any], list[tuple[Any, int]]] = {}
    per_node: dict[str, int] = {}  # items each node ran (a retried batch counts where it ended)

    async def drain(until: int) -> None:
        while len(inflight) > until:
            done, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                batch = inflight.pop(fut)
                recs = {str(r.id): r for r, _ in batch}
                node, results = fut.result()
                ran = sum(1 for _, end, _ in results if end.end is not End.STOPPED)
                per_node[node] = per_node.get(node, 0) + ran
                for item, end, cur in results:
                    run.end(recs[item], end, cur)
                if run.on_progress:
                    run.on_progress(run.snapshot())

    def submit(batch: list[tuple[Any, int]]) -> None:
        ref = task.remote(
            job,
            run.run_id,
            run.segment_id,
            batch,
            store.url,
            writer,
            services_factory,
            capacities,
            options.lean_actors_per_node if actors else 0,
        )
        inflight[asyncio.wrap_future(ref.future())] = batch
        run.begin(len(batch))

    try:
        batch: list[tuple[Any, int]] = []
        async for rec, count in run.pending(records):
            batch.append((rec, count))
            if len(batch) >= options.batch_size:
                await drain(width - 1)
                if run.halted:
                    break
                submit(batch)
                batch = []
        if batch and not run.halted:
            await drain(width - 1)
            if not run.halted:
                submit(batch)
        await drain(0)
        counts = await writer.counts.remote()
    finally:
        for fut in inflight:
            fut.cancel()
    return await run.finish(
        {
            "executor": "ray",
            "address": options.address,
            "nodes": nodes,
            "lean_actors": len(actors),
            "items_per_node": per_node,
            "writer": counts,
        }
    )


def ensure_writer(ray: Any, store: Store) -> Any:
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


def _here(ray: Any) -> Any:
    """Schedule on the driver's node (the writer lives beside the driver)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = _node_id(ray)
    return NodeAffinitySchedulingStrategy(node, soft=True) if node is not None else "DEFAULT"


def stop_actors(ray: Any, store_urls: Iterable[str] = ()) -> int:
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
