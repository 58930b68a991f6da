"""A Ray run's Lean on a node: each item worker (`math2.runs.ray_tasks.ItemWorker`) owns
`lean_actors_per_node` header-keyed `ReplPool`s in its own process, with the local pool's limits,
recycling and kill rules — no Lean actor of its own to start (about a second of CPU a node and
run) and no actor call a check. A worker's checks go to the pool with the fewest of them in
flight; the Lean it runs is asked of a REPL once and reported to the run's hub, which refuses a
node whose Lean is not the run's. A worker that dies takes its pools with it: its batch goes to
a new worker with new pools (`math2.runs.ray_pool`). `ActorBackend` is a worker's Lean seen
from another process (the driver asks it which Lean the run's first node runs).
"""

from __future__ import annotations

import asyncio
from typing import Any

from math2.lean.backends import RawOutcome, ReplBackend
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig


class ActorBackend:
    """The `LeanBackend` of an item worker seen from another process (the driver, asking which
    Lean the run's first node runs, for the run's identity): its calls go to the worker's
    `NodeLean` through the actor.

    Named like the local REPL backend (the same REPL pool compiles)."""

    name = "repl"

    def __init__(self, worker: Any):
        self.worker = worker

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        return RawOutcome.model_validate(await self.worker.check.remote(header, body, timeout))

    async def identity(self, header: str) -> LeanIdentity:
        """The Lean of the worker's pools, as its backend reports it (the cache key names it)."""
        return LeanIdentity.model_validate(await self.worker.lean_identity.remote(header))

    async def close(self) -> None:
        """The worker owns its pools; nothing to release."""


class NodeLean:
    """The `LeanBackend` of an item worker: `pools` REPL pools in its process, each check to the
    one with the fewest checks in flight (round robin among equals), so the checks spread evenly
    over the pools whatever each takes.

    Named like the local REPL backend (the same REPL pool compiles), so verdicts and attempts
    read the same on both executors."""

    name = "repl"

    def __init__(self, config: PoolConfig, pools: int = 1):
        self.backends = [ReplBackend.from_config(config) for _ in range(pools)]
        self.inflight = [0] * pools
        self.calls = 0
        self.most = 0  # the most checks in flight at once over the pools
        self._next = 0
        self._identity: asyncio.Future[LeanIdentity] | None = None

    def _pick(self) -> int:
        n = len(self.backends)
        start = self._next
        self._next = (self._next + 1) % n
        return min(((start + j) % n for j in range(n)), key=lambda i: self.inflight[i])

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        i = self._pick()
        self.inflight[i] += 1
        self.calls += 1
        self.most = max(self.most, sum(self.inflight))
        try:
            return await self.backends[i].run(header, body, timeout)
        finally:
            self.inflight[i] -= 1

    async def identity(self, header: str) -> LeanIdentity:
        """Which Lean the pools run, as the backend reports it (asked of a REPL once; again only
        after the question failed)."""
        if self._identity is None or (self._identity.done() and self._identity.exception()):
            self._identity = asyncio.ensure_future(self.backends[0].identity(header))
        ident = await asyncio.shield(self._identity)
        return ident.model_copy(update={"header": header})

    def info(self) -> dict[str, Any]:
        stats = [b.pool.stats for b in self.backends]
        return {
            "calls": self.calls,
            "most_in_flight": self.most,
            "checks": sum(s.checks for s in stats),
            "crashes": sum(s.crashes for s in stats),
            "timeouts": sum(s.timeouts for s in stats),
            "pools": len(self.backends),
            "pool_size": self.backends[0].pool.config.size,
        }

    async def close(self) -> None:
        for b in self.backends:
            await b.close()
