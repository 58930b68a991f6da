"""What the Ray executor runs on the cluster: the run's one writer, and the store and Lean
backend a worker's steps see. The run's hub (`math2.runs.ray_hub`) is the writer and lives with
the run.

- `StoreWriter` (an async actor on the driver's node) owns the run's `AsyncStore`: every write of
  every worker (item states, attempts, model replies, Lean results) is a closure sent to it and
  committed in its batches before the worker goes on ("stored before used", one writer).
- `RemoteStore` stands in for `AsyncStore` in a worker: reads go straight to PostgreSQL, writes go
  to the `StoreWriter`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.orm import Session

from math2.store.aio import AsyncStore
from math2.store.db import Store

if TYPE_CHECKING:  # imported by the hub: the checker and client come with a hosted worker
    from math2.lean.cache import ResultCache

T = TypeVar("T")
NAMESPACE = "math2"
#: A worker's writes wait up to `LINGER_S` for others to go with them while fewer than
#: `FLUSH_AT` are queued: a call to the writer costs about 1.3 ms of CPU over the processes
#: whatever it carries (`docs/benchmarks.md`, issue 44), and an item's writes, each awaited, leave
#: one at a time.
LINGER_S = 0.004
FLUSH_AT = 16


class StoreWriter:
    """The run's single writer (a Ray actor): `write(fn)` commits `fn(session)`, batched."""

    def __init__(self, url: str):
        self.astore = AsyncStore(Store(url))
        self.calls = 0
        self.finished: dict[str, int] = {}  # node: items its workers finished

    def _credit(self, node: str | None, finished: int) -> None:
        if node is not None and finished:
            self.finished[node] = self.finished.get(node, 0) + finished

    async def credit(self, node: str, finished: int) -> None:
        """`finished` more items were finished by a worker on `node`."""
        self._credit(node, finished)

    async def write(self, fn: Callable[[Session], T]) -> T:
        return await self.astore.write(fn)

    async def write_many(
        self, fns: list[Callable[[Session], Any]], node: str | None = None, finished: int = 0
    ) -> list[tuple[bool, Any]]:
        """Several writes in one call, handed to the store's writer together (so they share a
        commit): [(ok, result or exception)], each committed. `finished`: the items the caller's
        worker on `node` finished since its last call (counted per node, wherever a batch was
        retried)."""
        self.calls += 1
        self._credit(node, finished)
        futs = self.astore.store.writer.submit_many(fns)
        out = await asyncio.gather(*(asyncio.wrap_future(f) for f in futs), return_exceptions=True)
        return [(not isinstance(r, BaseException), r) for r in out]

    async def counts(self) -> dict[str, Any]:
        import ray

        return {
            "node": ray.get_runtime_context().get_node_id(),
            "writes": self.astore.writes,
            "commits": self.astore.commits,
            "calls": self.calls,
            "items_per_node": dict(self.finished),
        }

    async def close(self) -> None:
        await self.astore.aclose()


class RemoteStore:
    """`AsyncStore`'s interface in a worker: reads from PostgreSQL, writes through the writer."""

    def __init__(self, writer: Any, url: str, node: str | None = None):
        self.writer, self.node = writer, node
        self.finished = 0  # items finished here, not yet told to the writer
        self.store, self._readers = _shared_store(url)
        self._loop = asyncio.get_running_loop()
        self._queued: list[tuple[Callable[[Session], Any], asyncio.Future[Any]]] = []
        self._flusher: asyncio.Future[None] | None = None
        self.calls = 0  # actor calls made (each carries every write queued meanwhile)

    async def write(self, fn: Callable[[Session], T]) -> T:
        """Queue `fn`; return after its commit. At most one call to the writer is in flight per
        worker: the writes queued while it is out go together in the next one, so the batches
        grow with the load (fewer actor round trips and pickles); a call leaves once `FLUSH_AT`
        writes are queued or the first has waited `LINGER_S`."""
        fut: asyncio.Future[T] = self._loop.create_future()
        self._queued.append((fn, fut))
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush())
        return await fut

    async def _flush(self) -> None:
        try:
            while self._queued:
                if len(self._queued) < FLUSH_AT:
                    await asyncio.sleep(LINGER_S)
                batch, self._queued = self._queued, []
                self.calls += 1
                done, self.finished = self.finished, 0
                try:
                    fns = [fn for fn, _ in batch]
                    results = await self.writer.write_many.remote(fns, self.node, done)
                except BaseException as exc:
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    continue
                for (_, fut), (ok, value) in zip(batch, results, strict=True):
                    if not fut.done():
                        fut.set_result(value) if ok else fut.set_exception(value)
        finally:
            self._flusher = None

    async def credit(self) -> None:
        """Tell the writer of the items finished here that no write carried."""
        done, self.finished = self.finished, 0
        if done and self.node is not None:
            await self.writer.credit.remote(self.node, done)

    def write_sync(self, fn: Callable[[Session], T]) -> T:
        """`write` from a thread (the Lean result cache is called from threads)."""
        return asyncio.run_coroutine_threadsafe(self.write(fn), self._loop).result()

    async def read(self, fn: Callable[[Session], T]) -> T:
        def run() -> T:
            with self.store.session() as s:
                return fn(s)

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    async def aclose(self) -> None:
        """Nothing to release: the store and its readers serve the process's next batch."""


_STORES: dict[str, tuple[Store, ThreadPoolExecutor]] = {}


def _shared_store(url: str) -> tuple[Store, ThreadPoolExecutor]:
    """One `Store` (one connection pool) and its two reader threads per URL in a worker
    process."""
    if url not in _STORES:
        readers = ThreadPoolExecutor(2, thread_name_prefix="math2-remote-reader")
        _STORES[url] = (Store(url), readers)
    return _STORES[url]


@dataclass
class WorkerEnv:
    """What a services factory gets to build a run's services where the steps run.

    `astore` is the store for model caches and steps; `lean_backend` the backend to build a
    checker on; `result_cache()` the Lean result cache to give it (keyed by the Lean identity
    the checker's backend reports).
    """

    astore: Any
    lean_backend: Any
    store: Store
    executor: str = "local"

    def result_cache(self) -> ResultCache:
        """Reads from the store; writes through the run's writer (the store's own writer
        locally, the `StoreWriter` actor from a Ray worker)."""
        from math2.lean.cache import ResultCache

        return ResultCache(self.store, writer=self.astore)
