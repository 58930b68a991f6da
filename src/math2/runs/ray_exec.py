"""The Ray executor: the same job, steps, run items and attempts as the local executor, on a
Ray cluster.

The driver reads the input, skips what the store says is finished (exactly as the local executor
does, so a driver killed with SIGKILL and started again resumes the same way), and sends the
other items to Ray tasks in batches of `batch_size`, at most `max_batches` at once (the next
record is read only when a batch comes back: back-pressure, flat memory). A task
(`ray_tasks.run_batch`) runs its items through `engine.run_item` — the one code path — with a
store whose writes go to the run's single writer (`StoreWriter`) and a Lean backend that reaches
its node's `LeanActor`. The run's lifecycle — identity, lease, skipping, segments, how it ends —
is `math2.runs.lifecycle`'s, as on the local executor. Model endpoints stay outside the cluster.
PostgreSQL only: a SQLite file cannot be read by other machines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Any

from math2.lean.pool import PoolConfig
from math2.runs.context import RunServices
from math2.runs.identity import Provenance, run_identity
from math2.runs.lifecycle import ClaimedRun, End, Executor, RunRequest, drive
from math2.runs.progress import RunSummary
from math2.runs.ray_actors import (
    NAMESPACE,
    ActorBackend,
    LeanActor,
    StoreWriter,
    WorkerEnv,
    lean_actor_name,
    writer_name,
)
from math2.runs.ray_tasks import BatchTask, ServicesFactory, run_batch
from math2.runs.spec import Job
from math2.store.aio import AsyncStore
from math2.store.db import Store
from math2.util.limits import Resource


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
    request: RunRequest | None = None,
) -> RunSummary:
    """Run (or resume) `job` over `records` on a Ray cluster; return how it ended.

    `services_factory(env)` builds the steps' services where they run (clients, a checker on
    `env.lean_backend` with `env.result_cache(...)`); `resources` give each task's limits by
    capacity; `request` is what the caller asks of the run (params, resume, progress…). The
    run's lifecycle (identity, lease, skipping, segments, how it ends) is
    `math2.runs.lifecycle`'s, as on the local executor.
    """
    check_store(store)
    ray = connect(options)
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
    actors = ensure_lean_actors(ray, options) if options.lean is not None else {}
    identity = run_identity(job, await _provenance(ray, store, actors, services_factory))
    executor = Executor("ray", options.address)
    async with drive(store, identity, executor=executor, request=request) as run:
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
    width = options.max_batches or 4 * len(nodes)
    spec = BatchTask(
        job=job,
        run_id=run.run_id,
        segment_id=run.segment_id,
        url=store.url,
        writer=ensure_writer(ray, store),
        services_factory=services_factory,
        capacities={n: r.capacity for n, r in (resources or {}).items()},
        lean_actors=options.lean_actors_per_node if actors else 0,
    )
    task = ray.remote(run_batch).options(
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
        ref = task.remote(spec, batch)
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
        counts = await spec.writer.counts.remote()
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
