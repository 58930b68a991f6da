"""What a Ray worker runs for the Ray executor: a run's `ItemWorker` actor on each node runs the
batches the driver sends it — their items through `engine.run_item`, the one item path, on the
actor's event loop, with the services built there by the run's factory once per run, a store
that writes through the run's `StoreWriter`, the Lean pools the worker owns in its own process
(`math2.runs.ray_lean`: admitted by the run's hub before the first batch) and model clients bound
by their endpoints' cluster-wide limiters. The driver's side is `math2.runs.ray_exec`."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.runs.context import RunServices
from math2.runs.engine import run_item
from math2.runs.lifecycle import End, ItemEnd
from math2.runs.ray_actors import RemoteStore, WorkerEnv
from math2.runs.ray_hub import RunHub
from math2.runs.ray_lean import NodeLean
from math2.runs.ray_limits import bind_clients
from math2.runs.spec import Job
from math2.store.work import ItemStatus, RunItem
from math2.util.limits import Resource

S = TypeVar("S", bound=RunServices)
#: Builds a run's services where its steps run (a Ray worker; the driver, to ask what the run's
#: results come from): a module-level function or a functools.partial of one (it travels).
ServicesFactory = Callable[[WorkerEnv], S]


@dataclass(frozen=True)
class BatchTask:
    """What each batch of a segment of a run needs beside its items (it travels with it)."""

    job: Job
    run_id: int
    segment_id: int
    url: str  # the store's, read by the workers
    hub: Any  # the segment's `RunHub` actor
    tag: str  # the hub's tag (what a worker process caches the run's actors under)
    writer: Any  # the run's `StoreWriter` actor
    services_factory: ServicesFactory[Any] | None
    capacities: dict[str, int]
    lean: bool  # False: the run checks nothing


@dataclass
class BatchResult:
    """A batch's outcome: the node it ran on and each item's end, or — its node refused (it
    runs another Lean than the run's) — why, its items not run."""

    node: str
    results: list[tuple[str, ItemEnd, Any]] = field(default_factory=list)
    refused: str | None = None
    most_checks: int = 0  # the most checks its worker had in flight so far (its peak)


class ItemWorker:
    """A run's long-lived worker on one node (an async Ray actor the driver makes per node, with
    hard affinity, and ends with the run): `run(task, batch)` runs a batch of items on the
    actor's event loop, with the services it built once for the run (its connections to the
    store, its clients and its actor handles stay from one batch to the next: nothing is
    imported or built per batch) and the Lean pools it owns (`lean`: `pools` pools of that
    configuration, started on the first check; None: the run checks nothing)."""

    def __init__(self, lean: PoolConfig | None = None, pools: int = 1) -> None:
        import ray

        self.node = str(ray.get_runtime_context().get_node_id())
        self.config, self.pools = lean, pools
        self._lean: NodeLean | None = None
        self._admitted: dict[str, asyncio.Future[str | None]] = {}  # hub's tag: why refused

    def _hub_of(self, task: BatchTask) -> Any:
        """The run's hub as this worker calls it: the actor (a `HubWorker` calls itself)."""
        return None

    @property
    def lean(self) -> NodeLean:
        if self.config is None:
            raise RuntimeError("this run's item workers were made without a Lean pool")
        if self._lean is None:
            self._lean = NodeLean(self.config, self.pools)
        return self._lean

    async def run(self, task: BatchTask, batch: list[tuple[Any, int]]) -> BatchResult:
        backend = None
        if task.lean:
            refused = await self.admitted(task)
            if refused is not None:
                return BatchResult(self.node, refused=refused)
            backend = self.lean
        res = await _batch(task, self.node, batch, backend, self._hub_of(task))
        res.most_checks = self._lean.most if self._lean is not None else 0
        return res

    async def admitted(self, task: BatchTask) -> str | None:
        """Why the run's hub refuses this node (another Lean than the run's), or None; asked of
        each hub of the run once (again only after the question failed)."""
        fut = self._admitted.get(task.tag)
        if fut is None or (fut.done() and fut.exception() is not None):
            fut = self._admitted[task.tag] = asyncio.ensure_future(self._admit(task))
        return await asyncio.shield(fut)

    async def _admit(self, task: BatchTask) -> str | None:
        ident = await self.lean.identity("")
        hub = self._hub_of(task) or task.hub
        why: str | None = await hub.admit.remote(self.node, ident.model_dump(mode="json"))
        return why

    async def check(self, header: str, body: str, timeout: float) -> dict[str, Any]:
        """One check on this worker's pools (for another process: `ray_actors.ActorBackend`)."""
        return (await self.lean.run(header, body, timeout)).model_dump(mode="json")

    async def lean_identity(self, header: str) -> dict[str, Any]:
        """The Lean this worker's pools run (asked of a REPL once)."""
        return (await self.lean.identity(header)).model_dump(mode="json")

    async def info(self) -> dict[str, Any]:
        """The worker's node and process and what its pools did."""
        import os

        lean = self._lean.info() if self._lean is not None else {}
        return {"node": self.node, "pid": os.getpid(), **lean}

    async def ready(self) -> str:
        """The worker's node, once it is up."""
        return self.node

    async def until_dead(self) -> None:
        """Never returns: the run's hub keeps this call open, and Ray fails it when this actor
        dies (its process or its node), which is how the hub learns of the death."""
        await asyncio.Event().wait()


class HubWorker(RunHub, ItemWorker):
    """The run's hub (`RunHub`: its writer, the judge of its nodes' Lean, its limiters) that is
    also the item worker of the driver's node, in one actor and one process: a run starts one
    Ray process and one import of math2 fewer. Made by the driver on its own node with hard
    affinity, as a hub is (`ray_guard.Hubs`), reserving what an item worker reserves; the
    driver's pool counts it as that node's first worker (`ray_pool.WorkerPool.adopt`). Its own
    items call the hub in-process (`Local`: no pickling, no round trip); other workers call it
    as they call a hub. Lost, it is both the hub lost (made again from the store's state) and
    that node's worker lost (its batches go again)."""

    def __init__(
        self,
        tag: str,
        url: str,
        *,
        reference: LeanIdentity | None = None,
        lean: PoolConfig | None = None,
        pools: int = 1,
    ) -> None:
        RunHub.__init__(self, tag, url, reference=reference)
        ItemWorker.__init__(self, lean, pools)
        self._local = Local(self)

    def _hub_of(self, task: BatchTask) -> Any:
        return self._local if task.tag == self.tag else None


class _LocalMethod:
    def __init__(self, owner: Local, fn: Callable[..., Any]):
        self.owner, self.fn = owner, fn

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        task: asyncio.Future[Any] = asyncio.ensure_future(self.fn(*args))
        self.owner.running.add(task)  # held: the loop keeps weak references
        task.add_done_callback(self.owner.running.discard)
        return task


class Local:
    """An async actor's methods called from its own event loop as its handle's are —
    `x.method.remote(*args)`, awaited or not — without pickling or a round trip: the calls a
    `HubWorker`'s own items make to its hub (writes, permits, admission)."""

    def __init__(self, obj: Any):
        self.obj = obj
        self.running: set[asyncio.Future[Any]] = set()

    def __getattr__(self, name: str) -> _LocalMethod:
        return _LocalMethod(self, getattr(self.obj, name))


#: This process's services per (run's hub, node): built once by the run's factory and kept
#: for the run's next batches here (its clients, connections and caches stay warm); closed when
#: evicted by newer runs.
_SERVICES: collections.OrderedDict[
    tuple[str, str], asyncio.Future[tuple[RunServices, RemoteStore, dict[str, Resource]]]
] = collections.OrderedDict()
_KEEP = 4  # runs whose services a worker process keeps


async def _services(
    task: BatchTask, node: str, backend: NodeLean | None, hub: Any = None
) -> tuple[RunServices, RemoteStore, dict[str, Resource]]:
    """The run's services here, its store, and the limits all its batches' items share here (as
    a local run's items share the run's: one batch's items never wait on a slot another batch
    left free); `hub`: the run's hub in this process (`Local`), else the task's actor."""
    key = (task.tag, node)
    fut = _SERVICES.get(key)
    if fut is None or (fut.done() and fut.exception() is not None):
        fut = _SERVICES[key] = asyncio.get_running_loop().create_future()
        try:
            astore = RemoteStore(hub or task.writer, task.url, node)
            env = WorkerEnv(astore=astore, lean_backend=backend, store=astore.store, executor="ray")
            factory = task.services_factory
            services: RunServices = factory(env) if factory is not None else RunServices()
            bind_clients(services, hub or task.hub, task.tag)
            resources = {n: Resource(n, c) for n, c in task.capacities.items()}
            fut.set_result((services, astore, resources))
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        while len(_SERVICES) > _KEEP:  # runs long gone
            _, old = _SERVICES.popitem(last=False)
            if old.done() and old.exception() is None:
                with contextlib.suppress(Exception):
                    await old.result()[0].aclose()
    return await asyncio.shield(fut)


async def _batch(
    task: BatchTask,
    node: str,
    batch: list[tuple[Any, int]],
    backend: NodeLean | None,
    hub: Any = None,
) -> BatchResult:
    run_id = task.run_id
    services, astore, resources = await _services(task, node, backend, hub)
    ids = [str(rec.id) for rec, _ in batch]

    def states(s: Session) -> dict[str, tuple[str, int]]:
        rows = s.execute(
            select(RunItem.item, RunItem.status, RunItem.attempt_count).where(
                RunItem.run_id == run_id, RunItem.item.in_(ids)
            )
        )
        return {i: (st, c) for i, st, c in rows}

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
        if end.end is not End.STOPPED:
            astore.finished += 1  # credited to this node with the next write
        return item, end, cur

    running = [asyncio.ensure_future(one(r, c)) for r, c in batch]
    try:
        results = list(await asyncio.gather(*running))
    except BaseException:  # e.g. the run's writer died: the batch's other items stop too
        for t in running:
            t.cancel()
        raise
    await astore.credit()
    return BatchResult(node, results)
