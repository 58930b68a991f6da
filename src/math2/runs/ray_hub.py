"""A Ray run's hub — its one writer, the judge of its nodes' Lean, the holder of its
cluster-wide model limits — and the names of math2's actors on a cluster.

`RunHub` is an async actor the driver makes for each time it drives a run (a segment), beside
itself; the driver ends it when the segment ends, and Ray ends it when the driver dies (the
run's item workers, which own the nodes' Lean pools, are the driver's and end the same way).
Nothing of a run outlives it, so the next run, with other `[lean]` settings (REPL command,
timeout, memory limit, project), gets pools made from those.

- It is the run's one writer (a `StoreWriter`, on the driver's node): every write of every
  worker goes through it.
- `admit(node, lean)`: each node's item worker reports the Lean its pools run (`math2.runs.
  ray_lean`) before its first batch; the first node's is the run's Lean (the one its identity
  names), and a node whose Lean differs is refused, with why: its batches go to the other nodes.
- `limiter(key, capacity, hold_s)`: one `EndpointLimiter` per model endpoint, held in the hub
  itself (no process of its own to start per run) — the cluster-wide bound on the calls in
  flight to it, however many nodes and workers call it; `acquire` and `release` name the
  endpoint. A worker's model clients hold their slots through a `ClusterLimiter`; the hub
  watches each worker that asks (`watch`) and drops its permits when Ray says it died.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any

from math2.lean.identity import LeanIdentity
from math2.runs.ray_actors import NAMESPACE, StoreWriter
from math2.runs.ray_limits import EndpointLimiter

_log = logging.getLogger(__name__)


def same_lean(run: LeanIdentity, node: LeanIdentity) -> bool:
    """Whether a node runs the run's Lean (kind, version and Mathlib commit)."""
    return (run.kind, run.lean_version, run.mathlib_commit) == (
        node.kind,
        node.lean_version,
        node.mathlib_commit,
    )


class RunHub(StoreWriter):
    """The run's one writer (a `StoreWriter`), the judge of its nodes' Lean and the holder of its
    limiters, in one async Ray actor owned by the driver (one process fewer to start for each
    run)."""

    def __init__(self, tag: str, url: str, *, reference: LeanIdentity | None = None):
        super().__init__(url)
        self.tag = tag
        # the run's Lean: the first node's, or the one its identity names (a hub made again)
        self.reference: LeanIdentity | None = reference
        self.identities: dict[str, str] = {}  # node: the Lean it runs
        self.refused: dict[str, str] = {}  # node: why
        self.limiters: dict[str, EndpointLimiter] = {}
        self.watched: dict[str, asyncio.Task[None]] = {}  # holder: the watch on its actor

    async def admit(self, node: str, lean: dict[str, Any]) -> str | None:
        """Whether `node`, whose item worker's pools run `lean`, may run the run's items: None,
        or why not (another Lean than the run's)."""
        ident = LeanIdentity.model_validate(lean)
        self.identities[node] = ident.label()
        if self.reference is None:
            self.reference = ident
        elif not same_lean(self.reference, ident):
            self.refused[node] = (
                f"node {node} runs {ident.label()}, not the run's Lean ({self.reference.label()}): "
                "its work goes to the other nodes"
            )
            return self.refused[node]
        return None

    async def refer(self, lean: dict[str, Any]) -> None:
        """The run's Lean (the one its identity names), before any node is admitted."""
        self.reference = LeanIdentity.model_validate(lean)

    async def limiter(
        self, key: str, capacity: int, hold_s: float, holder: str = "", worker: Any = None
    ) -> bool:
        """The one limiter of a model endpoint in this run (made on first use); `worker`: the
        asking item worker's actor, watched from now on (`watch`)."""
        if key not in self.limiters:
            self.limiters[key] = EndpointLimiter(key, capacity, hold_s)
        if worker is not None and holder not in self.watched:
            self.watched[holder] = asyncio.ensure_future(self.watch(holder, worker))
        return True

    async def watch(self, holder: str, worker: Any) -> None:
        """Wait for Ray to say the item worker `holder` died (a call that never returns, failed
        by Ray when its actor dies — its process or its node), then drop its permits and
        queued requests in every limiter. A worker that is only busy or blocked stays a holder:
        its calls may still run."""
        from ray.exceptions import ActorUnavailableError, RayActorError

        wait = 1.0
        while True:
            try:
                await worker.until_dead.remote()
            except ActorUnavailableError:  # out of reach for now: ask again
                await asyncio.sleep(1.0)
                continue
            except RayActorError:  # Ray says it died
                break
            except Exception as exc:  # not Ray's word of a death: the holder keeps its permits
                _log.warning("watching %s: %s; asking again in %.0f s", holder, exc, wait)
                await asyncio.sleep(wait)
                wait = min(2 * wait, 30.0)
        for lim in self.limiters.values():
            lim.drop({holder}, why="holder")

    async def acquire(self, key: str, token: str, node: str = "", holder: str = "") -> bool:
        """`EndpointLimiter.acquire` of the endpoint `key`."""
        return await self.limiters[key].acquire(token, node, holder)

    async def release(self, key: str, token: str, uses: int = 1) -> None:
        await self.limiters[key].release(token, uses)

    async def ping(self) -> bool:
        """The hub lives (the driver asks when a batch failed)."""
        return True

    async def report(self) -> dict[str, Any]:
        """What the run's actors did: the nodes that reported their Lean and which, the nodes
        refused, each endpoint's limiter, the writer's counts."""
        refused = dict(self.refused)
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
    """math2's named actors alive on the cluster (runs' hubs — item workers, which own the Lean
    pools, are unnamed; also the Lean actors of runs before that, and the detached writers and
    Lean actors of math2 before runs owned their actors), sorted."""
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
