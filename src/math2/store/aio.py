"""The store from async code: writes through the store's one writer, reads on reader threads.

The event loop never runs synchronous SQL. `await astore.write(fn)` hands `fn(session)` to the
store's `SerialWriter` (`math2.store.writer`: one thread per store and process, batched commits)
and returns its result once the transaction is committed, so "stored before used" holds for
whatever the caller does next. Every `AsyncStore` over one `Store`, and the Lean result cache
over it, share that writer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.orm import Session

from math2.store.db import Store

T = TypeVar("T")


class AsyncStore:
    """Async access to a `Store`: serialized, batched writes; reads on a small thread pool."""

    def __init__(self, store: Store, *, readers: int = 2):
        self.store = store
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="math2-store-reader")
        self._closed = False

    @property
    def writes(self) -> int:
        """Writes the store's writer has committed (all its users together)."""
        return self.store.writer.writes

    @property
    def commits(self) -> int:
        """Transactions the store's writer has committed (a batch is one)."""
        return self.store.writer.commits

    async def write(self, fn: Callable[[Session], T]) -> T:
        """Run `fn(session)` in the store's writer; return its result after the commit."""
        if self._closed:
            raise RuntimeError("AsyncStore is closed")
        return await asyncio.wrap_future(self.store.writer.submit(fn))

    def write_sync(self, fn: Callable[[Session], T]) -> T:
        """`write` from a thread that is not running an event loop (the Lean result cache)."""
        if self._closed:
            raise RuntimeError("AsyncStore is closed")
        return self.store.writer.write(fn)

    async def read(self, fn: Callable[[Session], T]) -> T:
        """Run `fn(session)` on a reader thread (its own read transaction)."""

        def run() -> T:
            with self.store.session() as s:
                return fn(s)

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    def close(self) -> None:
        """Wait for every write queued so far, then stop the reader threads (the writer is the
        store's and stops with `Store.close`)."""
        if self._closed:
            return
        self._closed = True
        self.store.writer.flush()
        self._readers.shutdown(wait=True)

    async def aclose(self) -> None:
        """`close` without blocking the event loop."""
        await asyncio.to_thread(self.close)
