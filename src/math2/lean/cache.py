"""The compile-result cache in the store: a re-run never recompiles what it already knows."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.checker import CheckResult
from math2.lean.identity import LeanIdentity
from math2.store import LeanResult, Store
from math2.store.upsert import insert_ignore

T = TypeVar("T")


class Writer(Protocol):
    """Where the cache's rows are written: the store's one writer (`Store.writer`, an
    `AsyncStore`) or a Ray worker's `RemoteStore`, all with a blocking `write_sync`."""

    def write_sync(self, fn: Callable[[Session], T]) -> T: ...


class _StoreWriter:
    """`write_sync` onto `store.writer` (looked up per write: a forked child gets its own)."""

    def __init__(self, store: Store):
        self.store = store

    def write_sync(self, fn: Callable[[Session], T]) -> T:
        return self.store.writer.write(fn)


def result_row(key: str, result: CheckResult, identity: LeanIdentity) -> dict[str, Any]:
    """The `lean_results` row of a result: its key (which names the Lean), the Lean that
    produced it, and the result without the `cached` mark."""
    return dict(
        key=key,
        toolchain=f"{identity.kind}:{identity.lean_version}"[:64],
        mathlib_commit=(identity.mathlib_commit or "")[:64],
        status=result.status.value,
        result=result.model_dump(mode="json", exclude={"cached"}),
    )


class ResultCache:
    """Results keyed by `cache_key(Lean identity, header, code)`; an LRU in front.

    The key holds the identity the backend reported (kind, Lean version, Mathlib commit), so a
    result from one Lean (or from a test double) is never an answer for another. Reads go to the
    store from the caller's thread; writes go through `writer` (by default the store's one
    writer), the first writer of a key winning.
    """

    def __init__(self, store: Store, memory_items: int = 4096, *, writer: Writer | None = None):
        self.store = store
        self.writer = writer if writer is not None else _StoreWriter(store)
        self._lru: collections.OrderedDict[str, CheckResult] = collections.OrderedDict()
        self._max = memory_items
        self.hits = 0
        self.misses = 0
        # The checker calls get/put from worker threads (never SQL on the event loop).
        self._lock = threading.Lock()

    def _remember(self, key: str, result: CheckResult) -> None:
        with self._lock:
            self._lru[key] = result
            self._lru.move_to_end(key)
            while len(self._lru) > self._max:
                self._lru.popitem(last=False)

    def get(self, key: str) -> CheckResult | None:
        """The stored result for `key`, or None."""
        with self._lock:
            hit = self._lru.get(key)
            if hit is not None:
                self.hits += 1
                self._lru.move_to_end(key)
                return hit
        with self.store.session() as s:
            row = s.scalar(select(LeanResult.result).where(LeanResult.key == key))
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        result = CheckResult.model_validate(row)
        self._remember(key, result)
        return result

    def put(self, key: str, result: CheckResult, identity: LeanIdentity) -> None:
        """Store `result` (first writer wins; results for one key are equal by construction);
        returns once it is committed."""
        values = result_row(key, result, identity)
        self.writer.write_sync(lambda s: insert_ignore(s, LeanResult, values, keys=("key",)))
        self._remember(key, result)
