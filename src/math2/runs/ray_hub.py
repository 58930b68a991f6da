"""The actors of one Ray run, made on demand by its hub, and the cluster-wide model limits.

`RunHub` is an async actor the driver makes for each time it drives a run (a segment), beside
itself; every actor the run uses is made by the hub and owned by it, so they all live with the
run: the driver ends the hub when the segment ends, and Ray ends the hub — and with it the run's
actors — when the driver dies. Nothing of a run outlives it, so the next run, with other `[lean]`
settings (REPL command, timeout, memory limit, project), gets actors made from those.

- It is the run's one writer (a `StoreWriter`, on the driver's node): every write of every
  worker goes through it.
- `lean(node)`: the node's `LeanActor`s, made the first time a batch on that node asks — a node
  that joins mid-run gets its own. Each node's first actor reports the Lean it runs; the first
  node's is the run's Lean (the one its identity names), and a node whose Lean differs is
  refused, with why: its batches go to the other nodes.
- `limiter(key, capacity, hold_s)`: one `EndpointLimiter` per model endpoint, held in the hub
  itself (no process of its own to start per run) — the cluster-wide bound on the calls in
  flight to it, however many nodes and workers call it; `acquire`, `release` and `beat` name
  the endpoint. A worker's model clients hold their slots through a `ClusterLimiter`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.runs.ray_actors import NAMESPACE, StoreWriter
from math2.runs.ray_lean import LeanActor
from math2.runs.ray_limits import EndpointLimiter


def lean_actor_name(tag: str, node_id: str, index: int = 0) -> str:
    """The name of a node's Lean actor in the run whose hub is `tag`."""
    return f"math2-lean-{tag}-{node_id}-{index}"


def same_lean(run: LeanIdentity, node: LeanIdentity) -> bool:
    """Whether a node runs the run's Lean (kind, version and Mathlib commit)."""
    return (run.kind, run.lean_version, run.mathlib_commit) == (
        node.kind,
        node.lean_version,
        node.mathlib_commit,
    )


class RunHub(StoreWriter):
    """The run's one writer (a `StoreWriter`) and the registry of its other actors, in one async
    Ray actor owned by the driver (one process fewer to start for each run)."""

    def __init__(
        self,
        tag: str,
        url: str,
        pool: PoolConfig | None,
        per_node: int = 1,
        max_restarts: int = 8,
        *,
        reference: LeanIdentity | None = None,
        lean_cpus: float = 0,
        lean_memory: int | None = None,
    ):
        super().__init__(url)
        self.tag, self.pool = tag, pool
        self.per_node, self.max_restarts = per_node, max_restarts
        self.lean_cpus, self.lean_memory = lean_cpus, lean_memory
        # the run's Lean: the first node's, or the one its identity names (a hub made again)
        self.reference: LeanIdentity | None = reference
        self.leans: dict[str, asyncio.Future[tuple[list[Any], str | None]]] = {}
        self.identities: dict[str, str] = {}
        self.limiters: dict[str, EndpointLimiter] = {}

    def _on(self, node: str) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return NodeAffinitySchedulingStrategy(node, soft=False)

    async def lean(self, node: str) -> tuple[list[Any], str | None]:
        """The node's Lean actors, made when it first asks; ([], why) for a refused node."""
        if self.pool is None:
            return [], None
        fut = self.leans.get(node)
        if fut is None or (fut.done() and fut.exception() is not None):
            fut = self.leans[node] = asyncio.ensure_future(self._make_lean(node))
        return await asyncio.shield(fut)

    async def _make_lean(self, node: str) -> tuple[list[Any], str | None]:
        import ray

        actors: list[Any] = [
            ray.remote(LeanActor)
            .options(
                name=lean_actor_name(self.tag, node, i),
                namespace=NAMESPACE,
                max_restarts=self.max_restarts,
                max_task_retries=-1,  # a check in flight when the actor died is sent again
                num_cpus=self.lean_cpus,
                **({"memory": self.lean_memory} if self.lean_memory else {}),
                scheduling_strategy=self._on(node),
            )
            .remote(self.pool)
            for i in range(self.per_node)
        ]
        ident = LeanIdentity.model_validate(await actors[0].identity.remote(""))
        self.identities[node] = ident.label()
        if self.reference is None:
            self.reference = ident
        elif not same_lean(self.reference, ident):
            for a in actors:
                ray.kill(a, no_restart=True)
            return [], (
                f"node {node} runs {ident.label()}, not the run's Lean ({self.reference.label()}): "
                "its work goes to the other nodes"
            )
        return actors, None

    async def limiter(self, key: str, capacity: int, hold_s: float) -> bool:
        """The one limiter of a model endpoint in this run (made on first use)."""
        if key not in self.limiters:
            self.limiters[key] = EndpointLimiter(key, capacity, hold_s)
        return True

    async def acquire(self, key: str, token: str, node: str = "", holder: str = "") -> bool:
        """`EndpointLimiter.acquire` of the endpoint `key`."""
        return await self.limiters[key].acquire(token, node, holder)

    async def release(self, key: str, token: str, uses: int = 1) -> None:
        await self.limiters[key].release(token, uses)

    async def beat(self, key: str, holder: str) -> None:
        await self.limiters[key].beat(holder)

    async def ping(self) -> bool:
        """The hub lives (the driver asks when a batch failed)."""
        return True

    async def report(self) -> dict[str, Any]:
        """What the run's actors did: the nodes with Lean actors and their Lean, the nodes
        refused, each endpoint's limiter, the writer's counts."""
        refused = {
            n: f.result()[1]
            for n, f in self.leans.items()
            if f.done() and f.exception() is None and f.result()[1]
        }
        limits = {k: await lim.stats() for k, lim in self.limiters.items()}
        writer = await self.counts()
        return {
            "lean_nodes": dict(self.identities),
            "refused_nodes": refused,
            "limits": limits,
            "writer": writer,
        }


def new_tag() -> str:
    return uuid.uuid4().hex[:12]


def hub_name(tag: str) -> str:
    """The name of the hub of the run segment whose tag is `tag`."""
    return f"math2-hub-{tag}"


def named_actors(ray: Any) -> list[str]:
    """math2's named actors alive on the cluster (runs' hubs and Lean actors; also the detached
    writers and Lean actors of math2 before runs owned their actors), sorted."""
    names = ray.util.list_named_actors(all_namespaces=True)
    return sorted(
        str(a["name"])
        for a in names
        if a.get("namespace") == NAMESPACE and str(a["name"]).startswith("math2-")
    )


def left_over(names: list[str]) -> list[str]:
    """Of `names`, the actors no live run owns: not a hub, and no hub of their tag alive (a
    Lean actor is `math2-lean-TAG-…`; the detached `math2-writer-…` and `math2-lean-NODE` of
    older versions have none)."""
    hubs = {n.removeprefix("math2-hub-") for n in names if n.startswith("math2-hub-")}
    return [
        n
        for n in names
        if not n.startswith("math2-hub-")
        and not (n.startswith("math2-lean-") and n.split("-")[2] in hubs)
    ]


def stop_actors(ray: Any, *, every: bool = False) -> list[str]:
    """Kill math2's actors that no live run owns — with `every`, every math2 actor, the hubs
    of live runs too (their runs can no longer write: stop their drivers first); the names
    killed."""
    names = named_actors(ray)
    doomed = names if every else left_over(names)
    for n in doomed:
        with contextlib.suppress(ValueError):  # gone meanwhile (its hub ended)
            ray.kill(ray.get_actor(n, namespace=NAMESPACE), no_restart=True)
    return doomed
