"""The compile-result cache in the store: a re-run never recompiles what it already knows."""

from __future__ import annotations

import collections
import threading

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from math2.lean.checker import CheckResult
from math2.lean.identity import LeanIdentity
from math2.store import LeanResult, Store


class ResultCache:
    """Results keyed by `cache_key(Lean identity, header, code)`; an LRU in front.

    The key holds the identity the backend reported (kind, Lean version, Mathlib commit), so a
    result from one Lean (or from a test double) is never an answer for another.
    """

    def __init__(self, store: Store, memory_items: int = 4096):
        self.store = store
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
        """Store `result` (first writer wins; results for one key are equal by construction)."""
        values = dict(
            key=key,
            toolchain=f"{identity.kind}:{identity.lean_version}"[:64],
            mathlib_commit=(identity.mathlib_commit or "")[:64],
            status=result.status.value,
            result=result.model_dump(mode="json", exclude={"cached"}),
        )
        dialect = self.store.engine.dialect.name
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        stmt = insert(LeanResult).values(**values).on_conflict_do_nothing(index_elements=["key"])
        with self.store.session() as s:
            s.execute(stmt)
        self._remember(key, result)
