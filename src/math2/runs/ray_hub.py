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
- `limiter(key, capacity, hold_s)`: one `EndpointLimiter` per model endpoint — the cluster-wide
  bound on the calls in flight to it, however many nodes and tasks call it. A worker's model
  clients hold their slots through a `ClusterLimiter`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
import uuid
from typing import Any

from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.llm.client import LLMClient
from math2.runs.ray_actors import NAMESPACE, LeanActor, StoreWriter
from math2.util.limits import Resource


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
    ):
        super().__init__(url)
        self.tag, self.pool = tag, pool
        self.per_node, self.max_restarts = per_node, max_restarts
        self.reference: LeanIdentity | None = None  # the run's Lean: the first node's
        self.leans: dict[str, asyncio.Future[tuple[list[Any], str | None]]] = {}
        self.identities: dict[str, str] = {}
        self.limiters: dict[str, Any] = {}

    def _on(self, node: str) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return NodeAffinitySchedulingStrategy(node, soft=False)

    def _here(self) -> Any:
        """On the hub's node, never elsewhere (the limiters answer every model call, and a node
        that leaves must not take them: the hub's node lives as long as the run)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)

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
                num_cpus=0,
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

    async def limiter(self, key: str, capacity: int, hold_s: float) -> Any:
        """The one limiter of a model endpoint in this run (made on first use)."""
        import ray

        if key not in self.limiters:
            self.limiters[key] = (
                ray.remote(EndpointLimiter)
                .options(
                    num_cpus=0,
                    max_concurrency=100_000,  # each waiting acquire holds one
                    scheduling_strategy=self._here(),
                )
                .remote(key, capacity, hold_s)
            )
        return self.limiters[key]

    async def report(self) -> dict[str, Any]:
        """What the run's actors did: the nodes with Lean actors and their Lean, the nodes
        refused, each endpoint's limiter, the writer's counts."""
        refused = {
            n: f.result()[1]
            for n, f in self.leans.items()
            if f.done() and f.exception() is None and f.result()[1]
        }
        limits: dict[str, Any] = {}
        for k, a in self.limiters.items():
            try:  # the run's items are done: a limiter out of reach costs its figures only
                limits[k] = await a.stats.remote()
            except Exception as exc:  # a Ray error: the actor or its node is gone
                limits[k] = {"unavailable": f"{type(exc).__name__}: {exc}"[:300]}
        writer = await self.counts()
        return {
            "lean_nodes": dict(self.identities),
            "refused_nodes": refused,
            "limits": limits,
            "writer": writer,
        }


class EndpointLimiter:
    """At most `capacity` calls to one model endpoint at once across the cluster (an async Ray
    actor): `acquire(token)` waits for a permit, `release(token)` gives it back. A permit held
    longer than `hold_s` (longer than any call can last: its holder died with its worker) is
    taken back, so a lost worker lowers the bound for that long and never raises it. A token
    released before its acquire ran (the caller gave up) is never granted."""

    def __init__(self, key: str, capacity: int, hold_s: float):
        self.key, self.capacity, self.hold_s = key, capacity, hold_s
        self.held: dict[str, float] = {}
        self.waiters: collections.deque[tuple[str, asyncio.Future[None]]] = collections.deque()
        self.given_up: set[str] = set()
        self.acquired = self.max_in_flight = self.reclaimed = 0
        self._reaper: asyncio.Task[None] | None = None

    async def acquire(self, token: str) -> bool:
        self._reclaim()
        if token in self.given_up:
            self.given_up.discard(token)
            return False
        if len(self.held) < self.capacity and not self.waiters:
            self._grant(token)
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiters.append((token, fut))
            if self._reaper is None:
                self._reaper = asyncio.ensure_future(self._reap())
            await fut
        return True

    async def release(self, token: str) -> None:
        if self.held.pop(token, None) is None:
            for i, (t, fut) in enumerate(self.waiters):
                if t == token:
                    del self.waiters[i]
                    fut.cancel()
                    return
            self.given_up.add(token)
            return
        self._wake()

    def _grant(self, token: str) -> None:
        self.held[token] = time.monotonic()
        self.acquired += 1
        self.max_in_flight = max(self.max_in_flight, len(self.held))

    def _wake(self) -> None:
        while self.waiters and len(self.held) < self.capacity:
            token, fut = self.waiters.popleft()
            if not fut.done():
                self._grant(token)
                fut.set_result(None)

    def _reclaim(self) -> None:
        cutoff = time.monotonic() - self.hold_s
        for token, since in list(self.held.items()):
            if since < cutoff:
                del self.held[token]
                self.reclaimed += 1
        self._wake()

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self.hold_s / 4))
            self._reclaim()

    async def stats(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "max_in_flight": self.max_in_flight,
            "calls": self.acquired,
            "reclaimed": self.reclaimed,
        }


def endpoint_key(client: LLMClient) -> str:
    """The endpoint a client calls (its model at its base URL)."""
    ep = client.endpoint
    return f"{ep.model}@{ep.base_url}"


def hold_s(client: LLMClient) -> float:
    """Longer than one call of the client can hold a slot: every try at its timeout, every
    backoff at its cap, twice over."""
    ep = client.endpoint
    return 2 * (ep.max_retries + 1) * (ep.timeout_s + ep.backoff_max_s)


_LIMITERS: collections.OrderedDict[tuple[str, str], Any] = collections.OrderedDict()


class ClusterLimiter(Resource):
    """A model client's slots in a Ray worker: each slot is a permit of its endpoint's
    `EndpointLimiter`, so the endpoint's concurrency holds across the cluster (the hub's actor
    is looked up once per worker process and run)."""

    def __init__(self, hub: Any, tag: str, client: LLMClient):
        super().__init__(client.limiter.name, client.limiter.capacity)
        self.hub, self.tag = hub, tag
        self.key, self.hold_s = endpoint_key(client), hold_s(client)

    async def _actor(self) -> Any:
        k = (self.tag, self.key)
        if k not in _LIMITERS:
            _LIMITERS[k] = await self.hub.limiter.remote(self.key, self.capacity, self.hold_s)
            while len(_LIMITERS) > 64:  # runs long gone
                _LIMITERS.popitem(last=False)
        return _LIMITERS[k]

    async def _take(self) -> tuple[Any, str]:
        """A permit of the endpoint's limiter, by a fresh token."""
        token = uuid.uuid4().hex
        actor = None
        try:
            actor = await self._actor()
            await actor.acquire.remote(token)
        except BaseException:
            if actor is not None:  # the permit, granted or not, is not kept
                actor.release.remote(token)
            raise
        return actor, token

    def _give(self, held: Any) -> None:
        actor, token = held
        actor.release.remote(token)  # its order does not matter: a permit is by token


def bind_clients(services: Any, hub: Any, tag: str) -> None:
    """Give every model client of a worker's services its endpoint's cluster-wide limiter."""
    for client in services.model_clients():
        client.limiter = ClusterLimiter(hub, tag, client)


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
