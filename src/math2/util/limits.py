"""A bounded resource (model slots, Lean workers) that knows how busy it has been."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class Resource:
    """At most `capacity` holders at once; tracks busy slot-seconds for utilisation."""

    def __init__(self, name: str, capacity: int):
        if capacity < 1:
            raise ValueError(f"resource {name!r} needs a capacity of at least 1")
        self.name = name
        self.capacity = capacity
        self._sem = asyncio.Semaphore(capacity)
        self.in_use = 0
        self.waiting = 0
        self.acquired = 0
        self._busy_s = 0.0
        self._since = time.monotonic()
        self._last_change = self._since

    def _account(self) -> None:
        now = time.monotonic()
        self._busy_s += self.in_use * (now - self._last_change)
        self._last_change = now

    async def _take(self) -> Any:
        """Wait for a slot; what `_give` needs to hand it back (a subclass may hold its slots
        elsewhere: the Ray executor's cluster-wide limiter)."""
        await self._sem.acquire()

    def _give(self, held: Any) -> None:
        self._sem.release()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the duration of the block."""
        self.waiting += 1
        try:
            held = await self._take()
        finally:
            self.waiting -= 1
        self._account()
        self.in_use += 1
        self.acquired += 1
        try:
            yield
        finally:
            self._account()
            self.in_use -= 1
            self._give(held)

    def utilisation(self) -> float:
        """Busy slot-seconds over capacity × elapsed seconds, since creation (0..1)."""
        self._account()
        elapsed = max(time.monotonic() - self._since, 1e-9)
        return min(1.0, self._busy_s / (self.capacity * elapsed))
