"""Sign-in throttling that slows a guesser without locking the real reviewer out.

- Per client address, a token bucket: each sign-in attempt takes a token, a good one gives it
  back; an empty bucket is answered 429 at once, before any password hashing. A flood from one
  address therefore costs the server a few hashes, then nothing.
- Per name, an exponential delay after repeated failures (2 s, 4 s, … up to `max_delay_s`),
  enforced only against addresses that have failed themselves: a right password from a clean
  address still passes, so guessing at someone's name does not lock them out.
- The hashing itself runs in worker threads, at most `hash_slots` at a time, so a flood from
  many addresses queues there instead of taking every core from the other pages.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import anyio


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class _Name:
    fails: int = 0
    last: float = 0.0


@dataclass
class LoginThrottle:
    """Per-address bucket of `burst` attempts refilled one per `refill_s`; per-name delays after
    `free_fails` failures. State is per process and bounded (`max_keys` of each)."""

    burst: int = 10
    refill_s: float = 30.0
    free_fails: int = 3
    max_delay_s: float = 300.0
    hash_slots: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) // 2))
    max_keys: int = 50_000
    clock: object = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _names: dict[str, _Name] = field(default_factory=dict)
    _limiter: anyio.CapacityLimiter | None = None

    def _bucket(self, address: str, now: float) -> _Bucket:
        b = self._buckets.get(address)
        if b is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            b = self._buckets[address] = _Bucket(float(self.burst), now)
        else:
            b.tokens = min(float(self.burst), b.tokens + (now - b.at) / self.refill_s)
            b.at = now
        return b

    def _prune(self, now: float) -> None:
        full = [
            a
            for a, b in self._buckets.items()
            if b.tokens + (now - b.at) / self.refill_s >= self.burst
        ]
        for a in full:
            del self._buckets[a]
        stale = [n for n, x in self._names.items() if now - x.last > self.max_delay_s]
        for n in stale:
            del self._names[n]

    def _name_wait(self, name: str, now: float) -> float:
        x = self._names.get(name)
        if x is None or x.fails < self.free_fails:
            return 0.0
        delay = min(self.max_delay_s, 2.0 ** (x.fails - self.free_fails + 1))
        return max(0.0, x.last + delay - now)

    def admit(self, address: str, name: str) -> float:
        """0 when this attempt may go on (it takes a token), else the seconds to wait."""
        now = self.clock()
        b = self._bucket(address, now)
        if b.tokens < 1.0:
            return math.ceil((1.0 - b.tokens) * self.refill_s)
        clean = b.tokens >= self.burst - 1e-9
        wait = self._name_wait(name, now)
        if wait and not clean:
            return math.ceil(wait)
        b.tokens -= 1.0
        return 0.0

    def failed(self, address: str, name: str) -> None:
        """Count a failure against the name (the address already paid its token)."""
        now = self.clock()
        if name not in self._names and len(self._names) >= self.max_keys:
            self._prune(now)
        x = self._names.setdefault(name, _Name())
        x.fails += 1
        x.last = now

    def succeeded(self, address: str, name: str) -> None:
        """A good sign-in: the address gets its token back and the name's failures are forgotten."""
        now = self.clock()
        b = self._bucket(address, now)
        b.tokens = min(float(self.burst), b.tokens + 1.0)
        self._names.pop(name, None)

    async def run_hash(self, fn, *args):
        """Run a password check in a worker thread, at most `hash_slots` at once."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.hash_slots)
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)
