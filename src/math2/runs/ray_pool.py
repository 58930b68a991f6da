"""The driver's side of a Ray run's workers: per usable node, `workers_per_node` long-lived
`ItemWorker` actors (`math2.runs.ray_tasks`), made on the node with hard affinity the first time
a batch may go there and ended with the run; each batch goes to the worker with the fewest items
in flight. A worker that died (its process or its node: Ray says its actor died) leaves the
pool, and its batch goes back to the driver's queue; a node still usable gets a new worker when
a batch next may go there.
"""

from __future__ import annotations

import contextlib
from typing import Any

from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_tasks import BatchTask, ItemWorker


class Worker:
    """One `ItemWorker` actor of the run and the items it has in flight."""

    def __init__(self, actor: Any, node: str):
        self.actor, self.node = actor, node
        self.items = 0


class WorkerPool:
    """The run's item workers, by node (see the module's doc)."""

    def __init__(self, ray: Any, per_node: int, cpus: float, runtime_env: dict[str, Any] | None):
        self.ray, self.per_node, self.cpus = ray, per_node, cpus
        self.runtime_env = runtime_env
        self.workers: dict[str, list[Worker]] = {}
        self.made = 0
        self.lost = 0  # workers Ray said died

    def _make(self, node: str) -> Worker:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        env = {"runtime_env": self.runtime_env} if self.runtime_env else {}
        actor = (
            self.ray.remote(ItemWorker)
            .options(
                namespace=NAMESPACE,
                num_cpus=self.cpus,
                max_restarts=0,  # a dead worker's batch goes back to the driver's queue
                max_concurrency=100_000,  # its batches' items run together on its event loop
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                **env,
            )
            .remote()
        )
        self.made += 1
        return Worker(actor, node)

    def pick(self, nodes: list[str]) -> Worker:
        """The worker with the fewest items in flight on `nodes` (the usable ones), made there
        first where a node has fewer than `per_node`; the workers of nodes no longer usable are
        ended."""
        for node in list(self.workers):
            if node not in nodes:
                for w in self.workers.pop(node):
                    self._end(w)
        for node in nodes:
            ws = self.workers.setdefault(node, [])
            while len(ws) < self.per_node:
                ws.append(self._make(node))
        return min((w for n in nodes for w in self.workers[n]), key=lambda w: w.items)

    def submit(self, worker: Worker, task: BatchTask, batch: list[tuple[Any, int]]) -> Any:
        """Send a batch to `worker`; the ObjectRef of its `BatchResult`."""
        worker.items += len(batch)
        return worker.actor.run.remote(task, batch)

    def done(self, worker: Worker, batch: list[tuple[Any, int]]) -> None:
        worker.items -= len(batch)

    def died(self, worker: Worker, exc: BaseException) -> bool:
        """Whether `exc` (a batch's error) says the worker itself died — it then leaves the pool
        — rather than that its batch failed."""
        from ray.exceptions import ActorUnschedulableError, RayActorError, RayTaskError

        if isinstance(exc, RayTaskError):  # raised in the batch (e.g. its hub died), not of it
            return False
        if not isinstance(exc, RayActorError | ActorUnschedulableError):
            return False
        ws = self.workers.get(worker.node, [])
        if worker in ws:
            ws.remove(worker)
            self.lost += 1
        return True

    def _end(self, worker: Worker) -> None:
        with contextlib.suppress(Exception):  # already gone
            self.ray.kill(worker.actor)

    def kill(self) -> None:
        """End every worker of the run."""
        for ws in self.workers.values():
            for w in ws:
                self._end(w)
        self.workers.clear()

    def report(self) -> dict[str, int]:
        return {"made": self.made, "lost": self.lost}
