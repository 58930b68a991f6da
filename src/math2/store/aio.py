"""The store from async code: one writer thread (SQLite has one writer), a few reader threads.

The event loop never runs synchronous SQL. `await astore.write(fn)` runs `fn(session)` in the
writer thread inside a transaction and returns its result once the transaction is committed, so
"stored before used" holds for whatever the caller does next. Writes that queue up while a
transaction runs are committed together (one commit for a batch); if a batch fails, each of its
writes is retried alone, so one bad write never takes the others down with it.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.orm import Session

from math2.store.db import Store

log = logging.getLogger(__name__)
T = TypeVar("T")

_STOP = object()


class AsyncStore:
    """Async access to a `Store`: serialized, batched writes; reads on a small thread pool."""

    def __init__(self, store: Store, *, max_batch: int = 256, readers: int = 2):
        self.store = store
        self.max_batch = max_batch
        self._queue: queue.Queue = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="math2-store-writer")
        self._writer.daemon = True
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="math2-store-reader")
        self._started = False
        self._closed = False
        self.writes = 0
        self.commits = 0

    def _start(self) -> None:
        if not self._started:
            self._started = True
            self._writer.start()

    async def write(self, fn: Callable[[Session], T]) -> T:
        """Run `fn(session)` in the writer thread; return its result after the commit."""
        if self._closed:
            raise RuntimeError("AsyncStore is closed")
        self._start()
        fut: Future = Future()
        self._queue.put((fn, fut))
        return await asyncio.wrap_future(fut)

    async def read(self, fn: Callable[[Session], T]) -> T:
        """Run `fn(session)` on a reader thread (its own read transaction)."""

        def run() -> T:
            with self.store.session() as s:
                return fn(s)

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                batch.append(nxt)
            self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list) -> None:
        live = [(fn, fut) for fn, fut in batch if fut.set_running_or_notify_cancel()]
        if not live:
            return
        if len(live) > 1:
            try:
                with self.store.session() as s:
                    results = []
                    for fn, _ in live:
                        results.append(fn(s))
                        s.flush()
                self.commits += 1
                self.writes += len(live)
                for (_, fut), res in zip(live, results, strict=True):
                    fut.set_result(res)
                return
            except Exception:
                log.debug("batched write failed; retrying its %d writes one by one", len(live))
        for fn, fut in live:
            try:
                with self.store.session() as s:
                    res = fn(s)
                self.commits += 1
                self.writes += 1
                fut.set_result(res)
            except BaseException as exc:
                fut.set_exception(exc)

    def close(self) -> None:
        """Finish every queued write, then stop the threads."""
        if self._closed:
            return
        self._closed = True
        if self._started:
            self._queue.put(_STOP)
            self._writer.join()
        self._readers.shutdown(wait=True)

    async def aclose(self) -> None:
        """`close` without blocking the event loop."""
        await asyncio.to_thread(self.close)
