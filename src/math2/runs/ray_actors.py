"""What the Ray executor runs on the cluster: the run's one writer, one Lean actor per node, and
the store and Lean backend a worker task's steps see.

- `StoreWriter` (an async actor on the driver's node) owns the run's `AsyncStore`: every write of
  every worker (item states, attempts, model replies, Lean results) is a closure sent to it and
  committed in its batches before the worker goes on ("stored before used", one writer).
- `LeanActor` (one per node, restarted by Ray) owns a header-keyed `ReplPool` with the local
  pool's limits, recycling and kill rules; `ActorBackend` is the `LeanBackend` a worker's checker
  uses to reach the actor of its node. Ray retries a call that was in flight when the actor died.
- `RemoteStore` stands in for `AsyncStore` in a worker: reads go straight to PostgreSQL, writes go
  to the `StoreWriter`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from math2.lean.backends import RawOutcome, ReplBackend
from math2.lean.cache import ResultCache
from math2.lean.checker import CheckResult
from math2.lean.pool import PoolConfig
from math2.store.aio import AsyncStore
from math2.store.db import Store

T = TypeVar("T")
NAMESPACE = "math2"


def lean_actor_name(node_id: str) -> str:
    """The name of the Lean actor of a node."""
    return f"math2-lean-{node_id}"


class StoreWriter:
    """The run's single writer (a Ray actor): `write(fn)` commits `fn(session)`, batched."""

    def __init__(self, url: str):
        self.astore = AsyncStore(Store(url))

    async def write(self, fn: Callable[[Session], T]) -> T:
        return await self.astore.write(fn)

    async def counts(self) -> dict[str, int]:
        return {"writes": self.astore.writes, "commits": self.astore.commits}

    async def close(self) -> None:
        await self.astore.aclose()


class LeanActor:
    """A node's long-lived Lean worker set (a Ray actor): a `ReplPool` behind `run`."""

    def __init__(self, config: PoolConfig):
        import os

        self.backend = ReplBackend.from_config(config)
        self.pid = os.getpid()
        self.calls = 0

    async def run(self, header: str, body: str, timeout: float) -> dict[str, Any]:
        self.calls += 1
        out = await self.backend.run(header, body, timeout)
        return out.model_dump(mode="json")

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


class ActorBackend:
    """The `LeanBackend` of a worker: the checks go to its node's `LeanActor`.

    Named like the local REPL backend (the same REPL pool compiles), so verdicts and attempts
    read the same on both executors.
    """

    name = "repl"

    def __init__(self, actor: Any):
        self.actor = actor

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        data = await self.actor.run.remote(header, body, timeout)
        return RawOutcome.model_validate(data)

    async def close(self) -> None:
        """The actor outlives the task; nothing to release."""


class RemoteStore:
    """`AsyncStore`'s interface in a worker: reads from PostgreSQL, writes through the writer."""

    def __init__(self, writer: Any, url: str, readers: int = 2):
        self.writer = writer
        self.store = Store(url)
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="math2-remote-reader")

    async def write(self, fn: Callable[[Session], T]) -> T:
        return await self.writer.write.remote(fn)

    def write_sync(self, fn: Callable[[Session], T]) -> T:
        """`write` from a thread (the Lean result cache is called from threads)."""
        import ray

        return ray.get(self.writer.write.remote(fn))

    async def read(self, fn: Callable[[Session], T]) -> T:
        def run() -> T:
            with self.store.session() as s:
                return fn(s)

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    async def aclose(self) -> None:
        self._readers.shutdown(wait=False)
        self.store.close()


class WriterResultCache(ResultCache):
    """The Lean result cache of a worker: read from the store, written through the writer."""

    def __init__(self, remote: RemoteStore, toolchain: str, mathlib_commit: str):
        super().__init__(remote.store, toolchain, mathlib_commit)
        self.remote = remote

    def put(self, key: str, result: CheckResult) -> None:
        values = dict(
            key=key,
            toolchain=self.toolchain,
            mathlib_commit=self.mathlib_commit,
            status=result.status.value,
            result=result.model_dump(mode="json", exclude={"cached"}),
        )
        self.remote.write_sync(lambda s: _insert_result(s, values))
        self._remember(key, result)


def _insert_result(s: Session, values: dict[str, Any]) -> None:
    from math2.llm.cache import insert_ignore
    from math2.store import LeanResult

    insert_ignore(s, LeanResult.__table__, values)


@dataclass
class WorkerEnv:
    """What a services factory gets to build a run's services where the steps run.

    `astore` is the store for model caches and steps; `lean_backend` the backend to build a
    checker on; `result_cache(toolchain, commit)` the Lean result cache to give it.
    """

    astore: Any
    lean_backend: Any
    store: Store
    executor: str = "local"

    def result_cache(self, toolchain: str, mathlib_commit: str) -> ResultCache:
        if isinstance(self.astore, RemoteStore):
            return WriterResultCache(self.astore, toolchain, mathlib_commit)
        return ResultCache(self.store, toolchain, mathlib_commit)
