"""A Ray run's Lean actor, in a module of its own so that its process imports the Lean pool and
nothing of the store, the engine or the model clients (`math2.runs` names its modules lazily):
one per node, or `lean_actors_per_node`, made by the run's hub and restarted by Ray. It owns a
header-keyed `ReplPool` with the local pool's limits, recycling and kill rules, and reports the
Lean it runs (asked once); a worker reaches it through `ray_actors.ActorBackend`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from math2.lean.backends import ReplBackend
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig


class LeanActor:
    """A node's long-lived Lean worker set (a Ray actor): a `ReplPool` behind `run`."""

    def __init__(self, config: PoolConfig):
        self.backend = ReplBackend.from_config(config)
        self.pid = os.getpid()
        self.calls = 0
        self._identity: asyncio.Future[LeanIdentity] | None = None

    async def run(self, header: str, body: str, timeout: float) -> dict[str, Any]:
        self.calls += 1
        out = await self.backend.run(header, body, timeout)
        return out.model_dump(mode="json")

    async def identity(self, header: str) -> dict[str, Any]:
        """Which Lean this actor's pool runs, as the backend reports it (asked of a REPL once
        per actor; `header` is the one the caller's checks use)."""
        if self._identity is None or (self._identity.done() and self._identity.exception()):
            self._identity = asyncio.ensure_future(self.backend.identity(header))
        ident = await asyncio.shield(self._identity)
        return ident.model_copy(update={"header": header}).model_dump(mode="json")

    async def info(self) -> dict[str, Any]:
        import ray

        st = self.backend.pool.stats
        return {
            "node": ray.get_runtime_context().get_node_id(),
            "pid": self.pid,
            "calls": self.calls,
            "checks": st.checks,
            "crashes": st.crashes,
            "timeouts": st.timeouts,
            "pool_size": self.backend.pool.config.size,
        }
