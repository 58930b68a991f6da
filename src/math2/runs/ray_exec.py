"""The Ray executor: the same job, steps, run items and attempts as the local executor, on a Ray
cluster.

The driver reads the input, skips what the store says is finished (exactly as the local executor
does, so a driver killed with SIGKILL and started again resumes the same way), and sends the other
items in batches of `batch_size` to the run's long-lived item workers (`ray_pool`:
`workers_per_node` `ItemWorker` actors on each node, each batch to the one with the fewest items in
flight), with at most `items_per_node` items in flight per node (by default from the model
endpoints' concurrency and the node's REPLs: `items_per_node`); the next record is read only when
there is room (back-pressure, flat memory). The nodes are asked of Ray again every few seconds, so a
node that joins mid-run gets workers and raises the bound. A worker whose actor died (its process or
its node) leaves the pool and its batch goes to another. A worker (`ray_tasks.ItemWorker`) runs its
items through `engine.run_item` — the one code path — with a store whose writes go to the run's
single writer (the run's hub, `ray_hub.RunHub`), the Lean pools the worker owns (the hub admits a
node whose Lean is the run's) and model clients bound by their endpoints' cluster-wide limiters
(held by the hub), all living with the run. The
run's lifecycle — identity, lease, skipping, segments, how it ends — is `math2.runs.lifecycle`'s, as
on the local executor. Model endpoints stay outside the cluster. PostgreSQL only: a SQLite file
cannot be read by other machines.
"""

from __future__ import annotations

import asyncio
import collections
import math
from collections.abc import AsyncIterable, Iterable
from typing import Any

from pydantic import ConfigDict, Field

from math2.config import RaySettings
from math2.errors import Math2Error
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.runs.context import RunServices
from math2.runs.identity import Provenance, lean_of, run_identity
from math2.runs.lifecycle import ClaimedRun, Executor, RunRequest, drive
from math2.runs.progress import RunSummary
from math2.runs.ray_actors import NAMESPACE, WorkerEnv
from math2.runs.ray_guard import Hubs, one_line, refuse_if_held
from math2.runs.ray_lean import ActorBackend
from math2.runs.ray_nodes import REFRESH_S, Nodes, node_id
from math2.runs.ray_pool import Loss, Worker, WorkerPool
from math2.runs.ray_tasks import BatchResult, BatchTask, ServicesFactory
from math2.runs.spec import Job
from math2.store.aio import AsyncStore
from math2.store.db import Store
from math2.util.limits import Resource


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the store cannot be shared by a cluster."""


class BatchFailed(Math2Error):
    """A batch of the run failed on the cluster for another reason than its hub's death."""


class NoNodeForRun(Math2Error):
    """No node of the cluster may run the run's items (each runs another Lean than the run's)."""


class RayOptions(RaySettings):
    """Where the cluster is and how work is cut up (`RaySettings`: `[ray]` in math2.toml,
    `--ray-option` on the command line), with the Lean pool each item worker owns
    `lean_actors_per_node` of (None: the run checks nothing) and extra `ray.init` arguments."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    lean: PoolConfig | None = None
    init_kwargs: dict[str, Any] = Field(default_factory=dict)

    def recorded(self) -> dict[str, Any]:
        """What a run's segment records of them (for `math2 runs resume`)."""
        return self.model_dump(mode="json", include=set(RaySettings.model_fields))


def items_per_node(options: RayOptions, capacities: dict[str, int], nodes: int) -> int:
    """Items in flight per node. By Little's law (items in flight = throughput × time an item
    takes), a node's REPLs stay busy while its items cover them and the node's share of the
    model calls in flight — the model endpoints' concurrency, a cluster-wide bound — so a node
    holds twice (REPLs + endpoint concurrency / nodes) items, as the local executor holds twice
    its capacities; and at least two batches, so one keeps the node busy while the other drains
    and returns. `items_per_node` set in the options wins; a run with neither REPLs nor model
    limits holds 4 batches per node."""
    if options.items_per_node:
        return options.items_per_node
    pools = options.lean_actors_per_node * options.workers_per_node
    repls = options.lean.size * pools if options.lean is not None else 0
    model = sum(c for n, c in capacities.items() if n == "model" or n.startswith("model:"))
    if repls + model == 0:
        return 4 * options.batch_size
    return max(2 * options.batch_size, 2 * (repls + math.ceil(model / max(1, nodes))))


def worker_capacities(options: RayOptions, capacities: dict[str, int]) -> dict[str, int]:
    """The limits an item worker's items share (all its batches together): the run's, but
    `lean` — the checks in flight, which the local executor bounds by its pool's REPLs — set to
    twice the worker's own REPLs (`lean_actors_per_node` pools of `[lean] workers`): k pools of
    one REPL run k checks at once as a local pool of k does, and since a check holds its slot
    until its result is stored — on Ray a call to the run's writer, not a local commit — each
    REPL has its next check waiting in its pool meanwhile (Little's law, as `items_per_node`)."""
    out = dict(capacities)
    if "lean" in out and options.lean is not None:
        out["lean"] = 2 * options.lean.size * options.lean_actors_per_node
    return out


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
        env = {"runtime_env": options.runtime_env} if options.runtime_env else {}
        ray.init(address=options.address, namespace=NAMESPACE, **env, **options.init_kwargs)
    return ray


async def _provenance(
    store: Store, pool: WorkerPool, node: str | None, services_factory: ServicesFactory[Any] | None
) -> Provenance:
    """What the run's results come from, asked on the driver of the services the workers will
    build (their Lean through the pools of `node`'s item worker, whose Lean becomes the run's):
    part of the run's identity."""
    if services_factory is None:
        return Provenance()
    backend = ActorBackend(pool.first(node).actor) if node is not None else None
    astore = AsyncStore(store)
    services: RunServices = services_factory(
        WorkerEnv(astore=astore, lean_backend=backend, store=store, executor="ray")
    )
    try:
        return await services.provenance()
    finally:
        await services.aclose()
        await astore.aclose()


def _hubs(ray: Any, nodes: Nodes, pool: WorkerPool, home: str | None, url: str) -> Hubs:
    """The run's hub on the driver's node, hosting that node's item worker while the node may
    run items, until a hosting hub died (`ray_tasks.HubWorker`: one process fewer a run; `Hubs`);
    made before the run's identity is asked, so the first node's Lean is asked of its pools."""

    def host() -> Any:
        if home is None or home not in nodes.usable() or pool.given_up(home) is not None:
            return None
        return pool.hosting()

    hubs = Hubs(ray, home, url, None, host=host)
    if hubs.hosting and home is not None:
        pool.adopt(home, hubs.hub)
    return hubs


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
    capacity (a model client's own limit is its endpoint's, across the cluster); `request` is
    what the caller asks of the run (params, resume, progress…). The run's lifecycle (identity,
    lease, skipping, segments, how it ends) is `math2.runs.lifecycle`'s, as on the local
    executor. The run's actors (item workers with their Lean pools, the hub with the writer and
    the limiters) end with it.
    """
    check_store(store)
    refuse_if_held(store, job, request)  # before anything starts on the cluster
    ray = connect(options)
    nodes = Nodes(ray)
    home = node_id(ray)
    pool = WorkerPool(ray, options, options.lean)
    hubs: Hubs | None = None
    try:
        hubs = _hubs(ray, nodes, pool, home, store.url)
        first = home if home in nodes.usable() else next(iter(nodes.usable()), None)
        node = first if options.lean is not None else None
        identity = run_identity(job, await _provenance(store, pool, node, services_factory))
        lean = lean_of(identity.spec)
        await hubs.refer(lean)  # the first node's Lean is the run's
        executor = Executor("ray", options.address, options.recorded())
        async with drive(store, identity, executor=executor, request=request) as run:
            return await _run_on_cluster(
                run, ray, hubs, pool, lean, store, job, records, options, nodes,
                services_factory, resources,
            )  # fmt: skip
    finally:
        pool.kill()  # the run's item workers, their Lean pools with them
        if hubs is not None:
            hubs.kill()  # its writer and limiters


async def _run_on_cluster(
    run: ClaimedRun,
    ray: Any,
    hubs: Hubs,
    pool: WorkerPool,
    lean: LeanIdentity | None,
    store: Store,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    options: RayOptions,
    nodes: Nodes,
    services_factory: ServicesFactory[Any] | None,
    resources: dict[str, Resource] | None,
) -> RunSummary:
    """The Ray executor's part of a claimed run: batches of its items on the cluster. A batch
    that failed because the run's hub died is sent again through a new hub (`Hubs.remake`);
    any other failed batch ends the run `failed` with one line."""
    capacities = {n: r.capacity for n, r in (resources or {}).items()}

    def spec_of() -> BatchTask:
        return BatchTask(
            job=job,
            run_id=run.run_id,
            segment_id=run.segment_id,
            url=store.url,
            hub=hubs.hub,
            tag=hubs.tag,
            writer=hubs.hub,  # the hub is the run's writer
            services_factory=services_factory,
            capacities=worker_capacities(options, capacities),
            lean=options.lean is not None,
        )

    spec = spec_of()
    inflight: dict[asyncio.Future[Any], tuple[list[tuple[Any, int]], str, Worker, int]] = {}
    requeued: collections.deque[tuple[list[tuple[Any, int]], int]] = collections.deque()
    widest = 0

    def limit() -> int:
        usable = nodes.usable()
        if not usable:
            raise NoNodeForRun(
                f"run {run.run_id}: no node of the cluster may run its items: "
                + "; ".join(nodes.refused.values())
            )
        return items_per_node(options, capacities, len(usable)) * len(usable)

    def remake(why: str) -> None:
        """The hub died: a new one, from the store's state (bare once a hosting hub died:
        `Hubs`); the dead one leaves the pool."""
        nonlocal spec
        hubs.remake(run.run_id, lean, why)
        pool.adopt(hubs.node, hubs.hub if hubs.hosting else None)  # the dead hub leaves
        spec = spec_of()

    async def take(fut: asyncio.Future[Any]) -> None:
        batch, tag, worker, lost = inflight.pop(fut)
        pool.done(worker, batch)
        try:
            res: BatchResult = fut.result()
        except Exception as exc:  # a Ray error: its text carries a worker's traceback
            hosted = worker.hub and tag == hubs.tag  # the live hub ran it
            loss = await pool.loss(worker, exc, hubs.alive if hosted else None)
            if loss is not Loss.NO:  # its worker died or is out of reach: the batch goes again
                if loss is Loss.NOW:  # not for one that had left the pool (a replaced hub)
                    nodes.forget(worker.node)
                    if (why := pool.given_up(worker.node)) is not None:
                        nodes.refuse(worker.node, why)
                    if hosted:  # the hub hosted it: the writer is lost
                        remake(one_line(exc))
                if lost >= options.task_max_retries:
                    raise BatchFailed(
                        f"run {run.run_id}: a batch of {len(batch)} items lost its worker "
                        f"{lost + 1} times, last: {one_line(exc)}"
                    ) from None
                requeued.append((batch, lost + 1))
                return
            if tag == hubs.tag and not await hubs.alive():
                remake(one_line(exc))
            if tag != hubs.tag:  # its hub died: the batch goes again through the new one
                requeued.append((batch, lost))
                return
            raise BatchFailed(
                f"run {run.run_id}: a batch of {len(batch)} items failed on the cluster: "
                f"{one_line(exc)}"
            ) from None
        pool.done(worker, [], res.most_checks)
        if res.refused is not None:  # another Lean on that node: the batch goes elsewhere
            nodes.refuse(res.node, res.refused)
            requeued.append((batch, lost))
            return
        recs = {str(r.id): r for r, _ in batch}
        for item, end, cur in res.results:
            run.end(recs[item], end, cur)

    async def collect(timeout: float | None = None) -> None:
        done, _ = await asyncio.wait(
            list(inflight), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        for fut in done:
            await take(fut)
        if done and run.on_progress:
            run.on_progress(run.snapshot())

    async def send(batch: list[tuple[Any, int]], lost: int = -1) -> None:
        """Submit once there is room (the bound is asked again while waiting: a node that
        joined raises it); `lost`: how often the batch lost its worker (-1: a new batch)."""
        nonlocal widest
        while inflight and sum(len(b) for b, *_ in inflight.values()) + len(batch) > limit():
            await collect(timeout=REFRESH_S)
        if run.halted:
            return
        limit()  # NoNodeForRun when no node is left
        worker = pool.pick(nodes.usable())
        ref = pool.submit(worker, spec, batch)
        inflight[asyncio.wrap_future(ref.future())] = (batch, hubs.tag, worker, max(lost, 0))
        widest = max(widest, sum(len(b) for b, *_ in inflight.values()))
        if lost < 0:
            run.begin(len(batch))

    try:
        batch: list[tuple[Any, int]] = []
        async for rec, count in run.pending(records):
            batch.append((rec, count))
            if len(batch) >= options.batch_size:
                while requeued and not run.halted:
                    await send(*requeued.popleft())
                await send(batch)
                batch = []
                if run.halted:
                    break
        if batch and not run.halted:
            await send(batch)
        while inflight or (requeued and not run.halted):
            if requeued and not run.halted:
                await send(*requeued.popleft())
            else:
                await collect()
        for b, _ in requeued:  # the run stopped before they went elsewhere: they stay pending
            run.progress.running -= len(b)
        report = await _report(hubs)
    finally:
        for fut in inflight:
            fut.cancel()
    writer = report.get("writer") or {}
    return await run.finish(
        {
            "executor": "ray",
            "address": options.address,
            "nodes": sorted(nodes.seen),
            "lean_actors": pool.per_node
            * options.lean_actors_per_node
            * len(report.get("lean_nodes") or {}),
            # items finished by each node's workers, counted by the writer as they finish (a
            # retried batch's items stay with the node that did them)
            "items_per_node": writer.get("items_per_node", {}),
            "in_flight": {
                "per_node": items_per_node(options, capacities, len(nodes.usable()) or 1),
                "most": widest,
            },
            "hubs": hubs.made,
            "workers": await pool.report(),
            **report,
        }
    )


async def _report(hubs: Hubs) -> dict[str, Any]:
    """What the run's actors did (the hub's report); the run's items are done, so a hub out of
    reach costs its figures only."""
    try:
        return dict(await hubs.hub.report.remote())
    except Exception as exc:  # a Ray error: the hub or its node is gone
        return {"writer": {"unavailable": one_line(exc)}}
