"""The store's one writer: a thread that commits every write a process sends it, in order.

SQLite has one writer at a time; math2 makes that a fact in the process rather than a race that
`busy_timeout` settles. `Store.writer` is one `SerialWriter` per store (and per process): the
async store (`AsyncStore.write`), the Lean result cache (from the checker's worker threads) and
anything else that writes while a run is going hand it a function `fn(session)`; it runs the
function in a transaction and answers once the transaction is committed, so "stored before
used" holds for whatever the caller does next. Writes that queue up while a transaction runs are
committed together (one commit for a batch); if a batch fails, each of its writes is retried
alone, so one bad write never takes the others down with it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.orm import Session

if TYPE_CHECKING:
    from math2.store.db import Store

log = logging.getLogger(__name__)
T = TypeVar("T")

_STOP = object()


class WriterClosed(RuntimeError):
    """A write was sent to a writer that has been closed."""


class SerialWriter:
    """One thread that commits `fn(session)` for every caller, batched, in arrival order."""

    def __init__(self, store: Store, *, max_batch: int = 256):
        self.store = store
        self.max_batch = max_batch
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="math2-store-writer", daemon=True)
        self._start_lock = threading.Lock()
        self._started = False
        self._closed = False
        self.writes = 0
        self.commits = 0

    def submit(self, fn: Callable[[Session], T]) -> Future[T]:
        """Queue `fn`; the future holds its result once its transaction is committed."""
        if self._closed:
            raise WriterClosed(f"the writer of store {self.store.name} is closed")
        if threading.current_thread() is self._thread:
            raise RuntimeError("a write cannot wait for the writer from inside the writer")
        with self._start_lock:
            if not self._started:
                self._started = True
                self._thread.start()
        fut: Future[T] = Future()
        self._queue.put((fn, fut))
        return fut

    def submit_many(self, fns: list[Callable[[Session], Any]]) -> list[Future[Any]]:
        """Queue several writes as one arrival, so they go in one commit (unless one fails:
        then each is retried alone); a future each."""
        futs: list[Future[Any]] = [Future() for _ in fns]
        if not fns:
            return futs
        if self._closed:
            raise WriterClosed(f"the writer of store {self.store.name} is closed")
        with self._start_lock:
            if not self._started:
                self._started = True
                self._thread.start()
        self._queue.put(list(zip(fns, futs, strict=True)))
        return futs

    def write(self, fn: Callable[[Session], T]) -> T:
        """Run `fn(session)` in the writer and return its result after the commit (blocking:
        from a thread, never from an event loop; `AsyncStore.write` is the async form)."""
        return self.submit(fn).result()

    def flush(self) -> None:
        """Return once every write queued before this call is committed (or failed)."""
        if self._started and not self._closed:
            self.submit(lambda _s: None).result()

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = first if isinstance(first, list) else [first]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                batch.extend(nxt if isinstance(nxt, list) else [nxt])
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
        """Commit every queued write, then stop the thread."""
        if self._closed:
            return
        self._closed = True
        if self._started:
            self._queue.put(_STOP)
            self._thread.join()
