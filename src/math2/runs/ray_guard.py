"""What the Ray driver checks and keeps around a run: a run another live driver holds is
refused before anything starts on the cluster (no hub, no actor, no REPL probe), and the run's
hub — its one writer and the owner of its actors — is made on the driver's node (hard affinity)
and made again, from the store's state and the run's identity, if it dies anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from math2.errors import Math2Error
from math2.lean.identity import LeanIdentity
from math2.runs.claim import RunRequest
from math2.runs.lease import RunHeld, describe, is_free
from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_hub import RunHub, hub_name, new_tag
from math2.runs.spec import Job
from math2.store.db import Store
from math2.store.work import Run, RunLease, RunStatus

#: How long the driver waits for the hub to answer whether it lives.
PING_S = 30.0
#: How many times a run's hub is made again before the run ends `failed`.
HUB_REMAKES = 3


class HubLost(Math2Error):
    """The run's hub (its writer) died and could not be made again."""


def refuse_if_held(store: Store, job: Job, request: RunRequest | None) -> None:
    """RunHeld naming the holder when a live driver holds the run this one would drive: the
    run being resumed, or a running run of the same job on the same input under the same job
    spec (whatever Lean and models it names: those are asked of the cluster, later). Nothing
    is claimed here; the claim itself (`lifecycle.drive`) decides."""
    resume = request.resume if request is not None else None
    with store.session() as s:
        if resume is not None:
            ids = [resume.run_id]
        else:
            runs = s.scalars(
                select(Run).where(
                    Run.job == job.name, Run.key == job.input_key, Run.status == RunStatus.RUNNING
                )
            ).all()
            ids = [
                r.id for r in runs if {k: (r.spec or {}).get(k) for k in job.spec} == dict(job.spec)
            ]
        for run_id in ids:
            row = s.get(RunLease, run_id)
            if row is not None and not is_free(row):
                raise RunHeld(f"run {run_id} is being driven by {describe(row)}")


def _here(ray: Any, node: str | None) -> Any:
    """On the driver's node and nowhere else (a node that leaves must not take the writer)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node, soft=False) if node is not None else "DEFAULT"


#: What a hub that hosts its node's item worker is made with (`ray_pool.WorkerPool.hosting`):
#: the worker's reservation (CPUs, memory, runtime environment) and its Lean pools' arguments.
Hosting = tuple[dict[str, Any], dict[str, Any]]


class Hubs:
    """The run's hub, made beside the driver, and made again (a new tag: new limiters, the run's
    Lean as reference) when it died. `host()` says, each time a hub is made, whether it hosts
    the driver's node's item worker (a `ray_tasks.HubWorker`: one process fewer) and with what
    (`Hosting`), or None (a bare `RunHub`: no node may run items here, or the run checks on
    other nodes only). Once a hosting hub died, every hub after it is bare: a flaky worker (its
    Lean, its memory) costs the writer one remake of its `HUB_REMAKES`, and its node gets plain
    item workers, given up after `actor_max_restarts` deaths as any node's."""

    def __init__(
        self,
        ray: Any,
        node: str | None,
        url: str,
        reference: LeanIdentity | None,
        host: Callable[[], Hosting | None] = lambda: None,
    ):
        self.ray, self.node, self.url, self.host = ray, node, url, host
        self.made = 0
        self.hosting = False  # the live hub is its node's item worker too
        self.hosted_died = False  # a hosting hub died: no hub hosts a worker again
        self.tag, self.hub = self._make(reference)

    def _make(self, reference: LeanIdentity | None) -> tuple[str, Any]:
        from math2.runs.ray_tasks import HubWorker

        tag = new_tag()
        hosting = self.host() if self.node is not None and not self.hosted_died else None
        reserve, args = hosting if hosting is not None else ({"num_cpus": 0}, {})
        hub = (
            self.ray.remote(HubWorker if hosting is not None else RunHub)
            .options(
                name=hub_name(tag),
                namespace=NAMESPACE,
                # writes from every worker, each a call; each waiting acquire holds one; a
                # hosted worker's items run together on its event loop
                max_concurrency=100_000,
                max_restarts=0,  # made again by the driver, from the store's state
                scheduling_strategy=_here(self.ray, self.node),
                **reserve,
            )
            .remote(tag, self.url, reference=reference, **args)
        )
        self.made += 1
        self.hosting = hosting is not None
        return tag, hub

    async def refer(self, reference: LeanIdentity | None) -> None:
        """The run's Lean, once its identity is known (a hub made before it judges nodes by
        it)."""
        if reference is not None:
            await self.hub.refer.remote(reference.model_dump(mode="json"))

    async def alive(self) -> bool:
        """Whether the hub lives: dead only when Ray says its actor died (its process or its
        node is gone: the ping raises `RayActorError`); a busy hub that has not answered in
        `PING_S` is asked again, never taken for dead (Ray tells of a dead node's actors once it
        notices the node is gone)."""
        from ray.exceptions import ActorUnavailableError, RayActorError

        while True:
            try:
                ping = asyncio.wrap_future(self.hub.ping.remote().future())
                await asyncio.wait_for(ping, PING_S)
            except TimeoutError:
                continue  # slow, not dead
            except ActorUnavailableError:  # out of reach for now (e.g. its node is restarting)
                await asyncio.sleep(1.0)
                continue
            except RayActorError:  # Ray says it died
                return False
            except Exception:  # the call could not be made at all: no hub to write through
                return False
            return True

    def remake(self, run_id: int, reference: LeanIdentity | None, why: str) -> None:
        """A new hub for the run (its items' states are in the store: what was done stays
        done), or HubLost with one line when it was made again too often."""
        if self.made > HUB_REMAKES:
            raise HubLost(
                f"run {run_id}: its writer (the run's hub) died {self.made} times, last: {why}; "
                f"resume it with `math2 runs resume {run_id}`"
            )
        self.hosted_died |= self.hosting
        self.kill()
        self.tag, self.hub = self._make(reference)

    def kill(self) -> None:
        """End the hub and with it the run's writer and limiters."""
        with contextlib.suppress(Exception):  # already gone
            self.ray.kill(self.hub)


def one_line(exc: BaseException) -> str:
    """An error from the cluster in one line: its kind and its first line (a Ray error's text
    carries the worker's traceback; the store keeps none)."""
    cause = getattr(exc, "cause", None)
    base = cause if isinstance(cause, BaseException) else exc
    first = next((ln.strip() for ln in str(base).splitlines() if ln.strip()), "")
    return f"{type(base).__name__}: {first}"[:300]
