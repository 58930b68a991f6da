"""The driver's side of a Ray run's workers: per usable node, `workers_per_node` long-lived
`ItemWorker` actors (`math2.runs.ray_tasks`), each owning `lean_actors_per_node` Lean pools
(`math2.runs.ray_lean`) and reserving their CPUs and memory (`lean_actor_cpus`,
`lean_actor_memory`) beside its own `task_cpus`, made on the node with hard affinity the first
time a batch may go there and ended with the run; each batch goes to the worker with the fewest
items in flight. A worker that died or is out of reach (its process or its node: Ray says its
actor died or is unavailable) leaves the pool and is ended, and its batch goes back to the
driver's queue; a node still usable gets a new worker, with new pools, when a batch next may go
there — up to `actor_max_restarts` times a node, after which the node is given up (`given_up`:
the driver refuses it). The run's hub may host the driver's node's first worker (`adopt`): it
stays that node's first worker while the node is set aside, is never ended here, and is lost
only once the driver asked whether it lives (`loss`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Awaitable, Callable
from typing import Any

from math2.config import RaySettings
from math2.lean.pool import PoolConfig
from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_tasks import BatchTask, ItemWorker


class Loss(enum.Enum):
    """What a batch's error says of its worker (`WorkerPool.died`)."""

    NO = "no"  # the batch failed inside it (e.g. its hub died): the worker lives
    NOW = "now"  # it died (or is out of reach): it left the pool now, ended, counted
    BEFORE = "before"  # it died, but had left the pool before (another of its batches said so,
    # or a new hub took its place): nothing more to count
    AWAY = "away"  # the hub hosting it is out of reach for a while but lives (it is the run's
    # writer: not ended, nothing counted)


class Worker:
    """One `ItemWorker` actor of the run (`hub`: the run's hub, hosting it) and the items it has
    in flight."""

    def __init__(self, actor: Any, node: str, hub: bool = False):
        self.actor, self.node, self.hub = actor, node, hub
        self.items = 0


class WorkerPool:
    """The run's item workers, by node (see the module's doc)."""

    def __init__(self, ray: Any, options: RaySettings, lean: PoolConfig | None = None):
        self.ray, self.options, self.lean = ray, options, lean
        self.per_node = options.workers_per_node
        self.workers: dict[str, list[Worker]] = {}
        self.made = 0
        self.lost = 0  # workers Ray said died
        self.deaths: dict[str, int] = {}  # node: its workers that died
        self.most = 0  # the most checks a worker had in flight, as its batches said

    def _resources(self) -> dict[str, Any]:
        """What a worker reserves of its node: its own CPUs and its Lean pools' CPUs and memory,
        and the run's runtime environment."""
        o = self.options
        pools = o.lean_actors_per_node if self.lean is not None else 0
        out: dict[str, Any] = {"num_cpus": o.task_cpus + pools * o.lean_actor_cpus}
        if pools and o.lean_actor_memory:
            out["memory"] = pools * o.lean_actor_memory
        if o.runtime_env:
            out["runtime_env"] = o.runtime_env
        return out

    def hosting(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """What a hub that hosts a node's item worker reserves, and its worker's arguments
        (`ray_guard.Hosting`)."""
        return self._resources(), {"lean": self.lean, "pools": self.options.lean_actors_per_node}

    def adopt(self, node: str | None, hub: Any | None) -> None:
        """The run's (new) hub hosts `node`'s first item worker (None: it hosts none): it takes
        the place of the hub before it, which died with its worker (counted as a lost worker of
        its node, unless its own batch said so first)."""
        for ws in self.workers.values():
            for w in [w for w in ws if w.hub]:
                self._lose(w, ws)
        if node is not None and hub is not None:
            self.workers.setdefault(node, []).insert(0, Worker(hub, node, hub=True))
            self.made += 1

    def _make(self, node: str) -> Worker:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = (
            self.ray.remote(ItemWorker)
            .options(
                namespace=NAMESPACE,
                max_restarts=0,  # a dead worker's batch goes back to the driver's queue
                max_concurrency=100_000,  # its batches' items run together on its event loop
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                **self._resources(),
            )
            .remote(self.lean, self.options.lean_actors_per_node)
        )
        self.made += 1
        return Worker(actor, node)

    def pick(self, nodes: list[str]) -> Worker:
        """The worker with the fewest items in flight on `nodes` (the usable ones), made there
        first where a node has fewer than `per_node`; the workers of nodes no longer usable are
        ended, but the hub (see the module's doc)."""
        for node in list(self.workers):
            if node not in nodes:
                ws = self.workers[node]
                for w in ws:
                    if not w.hub:
                        self._end(w)
                # the hub lives on, the run's writer, still its node's first worker (its pools
                # idle): usable again, the node gets `per_node` - 1 workers beside it
                ws[:] = [w for w in ws if w.hub]
                if not ws:
                    del self.workers[node]
        for node in nodes:
            ws = self.workers.setdefault(node, [])
            while len(ws) < self.per_node:
                ws.append(self._make(node))
        return min((w for n in nodes for w in self.workers[n]), key=lambda w: w.items)

    def first(self, node: str) -> Worker:
        """A worker on `node` (made there if it has none), whatever the other nodes."""
        ws = self.workers.setdefault(node, [])
        if not ws:
            ws.append(self._make(node))
        return ws[0]

    def submit(self, worker: Worker, task: BatchTask, batch: list[tuple[Any, int]]) -> Any:
        """Send a batch to `worker`; the ObjectRef of its `BatchResult`."""
        worker.items += len(batch)
        return worker.actor.run.remote(task, batch)

    def done(self, worker: Worker, batch: list[tuple[Any, int]], most: int = 0) -> None:
        """`batch` came back from `worker`, which had at most `most` checks in flight so far."""
        worker.items -= len(batch)
        self.most = max(self.most, most)

    @staticmethod
    def fatal(exc: BaseException) -> bool:
        """Whether `exc` (a batch's error) says its worker died or is out of reach (Ray's
        `ActorUnavailableError` is a `RayActorError`), rather than that its batch failed."""
        from ray.exceptions import ActorUnschedulableError, RayActorError, RayTaskError

        if isinstance(exc, RayTaskError):  # raised in the batch (e.g. its hub died), not of it
            return False
        return isinstance(exc, RayActorError | ActorUnschedulableError)

    def died(self, worker: Worker, exc: BaseException) -> Loss:
        """What `exc` (a batch's error) says of `worker` (`Loss`). A worker lost now leaves the
        pool and is ended — one merely out of reach may still run its batch, which goes again:
        no item of it runs twice — and counts against its node."""
        if not self.fatal(exc):
            return Loss.NO
        ws = self.workers.get(worker.node, [])
        if worker not in ws:
            return Loss.BEFORE
        self._lose(worker, ws)
        return Loss.NOW

    async def loss(
        self, worker: Worker, exc: BaseException, hub: Callable[[], Awaitable[bool]] | None
    ) -> Loss:
        """`died`, but for the run's live hub hosting `worker` (`hub`: whether it lives,
        `ray_guard.Hubs.alive`), whose out-of-reach error (`ActorUnavailableError`) is no death:
        asked first, a hub that lives is `Loss.AWAY` (kept: no new hub, nothing counted)."""
        if hub is not None and self.fatal(exc) and await hub():
            return Loss.AWAY
        return self.died(worker, exc)

    def _lose(self, worker: Worker, ws: list[Worker]) -> None:
        ws.remove(worker)
        if not worker.hub:  # the hub is the driver's to end (`ray_guard.Hubs.remake`)
            self._end(worker)
        self.lost += 1
        self.deaths[worker.node] = self.deaths.get(worker.node, 0) + 1

    def given_up(self, node: str) -> str | None:
        """Why `node` gets no more workers (its workers died more than `actor_max_restarts`
        times: its Lean or its machine keeps failing), or None."""
        n = self.deaths.get(node, 0)
        if n > self.options.actor_max_restarts:
            return f"node {node}: its item worker died {n} times; its work goes to the other nodes"
        return None

    def _end(self, worker: Worker) -> None:
        with contextlib.suppress(Exception):  # already gone
            self.ray.kill(worker.actor)

    def kill(self) -> None:
        """End every worker of the run."""
        for ws in self.workers.values():
            for w in ws:
                self._end(w)
        self.workers.clear()

    async def report(self, timeout: float = 5.0) -> dict[str, int]:
        """Workers made and lost, and the most checks one had in flight at once: each batch
        that came back said its worker's peak so far (a worker lost later keeps it), and the
        live workers are asked once more at the end (one out of reach adds nothing)."""

        async def most_of(w: Worker) -> int:
            with contextlib.suppress(Exception):  # gone, or too slow to answer
                info = await asyncio.wait_for(
                    asyncio.wrap_future(w.actor.info.remote().future()), timeout
                )
                return int(info.get("most_in_flight", 0))
            return 0

        ws = [w for ws in self.workers.values() for w in ws]
        most = max([self.most, *await asyncio.gather(*(most_of(w) for w in ws))])
        return {"made": self.made, "lost": self.lost, "most_checks": most}
