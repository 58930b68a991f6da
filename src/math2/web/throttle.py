"""Sign-in throttling that slows a guesser without slowing the site or locking the reviewer out.

- Per client address, a token bucket: each sign-in attempt takes a token, a good one gives it
  back; an empty bucket is answered 429 at once, before any password hashing. A flood from one
  address therefore costs the server a few hashes, then nothing.
- Addresses that have not signed in before (in this process) share one more bucket: at most
  `unknown_burst` hashes at once and `unknown_per_s` a second among all of them. A flood from
  many addresses is answered 429 past that cap instead of taking the cores from the pages;
  addresses a reviewer has signed in from are not counted against it, and their hashes run in
  their own worker slot, so a known reviewer signs in at once during a flood.
- Per name, an exponential delay after repeated failures (2 s, 4 s, … up to `max_delay_s`),
  enforced only against addresses that have themselves failed `free_fails` times lately: the
  right password from an address that has not (or has mistyped once or twice) is checked, so
  guessing at someone's name does not lock them out.
- The hashing itself runs in worker threads, never on the event loop: one slot for known
  addresses and `hash_slots` for the others.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class _Name:
    fails: int = 0
    last: float = 0.0


@dataclass(frozen=True)
class Admission:
    """Whether one sign-in attempt goes on: `wait` 0 (go) or the seconds to wait, with `why`
    the reason shown."""

    wait: float = 0.0
    why: str = ""
    known: bool = False  # the address has signed in before: its own hashing slot


def _refill(b: _Bucket, burst: float, per_s: float, now: float) -> None:
    b.tokens = min(burst, b.tokens + (now - b.at) * per_s)
    b.at = now


@dataclass
class LoginThrottle:
    """Per-address bucket of `burst` attempts refilled one per `refill_s`; one shared bucket of
    `unknown_burst` hashes refilled `unknown_per_s` a second for addresses without a sign-in;
    per-name delays after `free_fails` failures. State is per process and bounded (`max_keys`
    of each)."""

    burst: int = 10
    refill_s: float = 30.0
    free_fails: int = 3
    max_delay_s: float = 300.0
    unknown_burst: int = 5
    unknown_per_s: float = 1.0
    known_for_s: float = 30 * 86400.0
    hash_slots: int = 1
    max_keys: int = 50_000
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _names: dict[str, _Name] = field(default_factory=dict)
    _known: OrderedDict[str, float] = field(default_factory=OrderedDict)
    _shared: _Bucket | None = None
    _limiters: dict[bool, anyio.CapacityLimiter] = field(default_factory=dict)

    def _bucket(self, address: str, now: float) -> _Bucket:
        b = self._buckets.get(address)
        if b is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            b = self._buckets[address] = _Bucket(float(self.burst), now)
        else:
            _refill(b, float(self.burst), 1.0 / self.refill_s, now)
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

    def is_known(self, address: str) -> bool:
        """Whether a reviewer signed in from this address lately (in this process)."""
        at = self._known.get(address)
        return at is not None and self.clock() - at <= self.known_for_s

    def admit(self, address: str, name: str) -> Admission:
        """May this attempt be checked? Takes the address's token (and, for an address without
        a sign-in, one of the shared hashes) only when it may."""
        now = self.clock()
        b = self._bucket(address, now)
        if b.tokens < 1.0:
            secs = math.ceil((1.0 - b.tokens) * self.refill_s)
            return Admission(secs, f"Too many failed sign-ins: wait {secs} s and try again.")
        own_fails = self.burst - b.tokens  # attempts not given back by a good sign-in, lately
        delay = self._name_wait(name, now)
        if delay and own_fails >= self.free_fails - 1e-9:
            secs = math.ceil(delay)
            return Admission(secs, f"Too many failed sign-ins: wait {secs} s and try again.")
        known = self.is_known(address)
        if not known:
            shared = self._shared
            if shared is None:
                shared = self._shared = _Bucket(float(self.unknown_burst), now)
            _refill(shared, float(self.unknown_burst), self.unknown_per_s, now)
            if shared.tokens < 1.0:
                secs = max(1, math.ceil((1.0 - shared.tokens) / self.unknown_per_s))
                return Admission(
                    secs,
                    f"Too many sign-ins from new addresses at the moment: wait {secs} s and try "
                    "again.",
                )
            shared.tokens -= 1.0
        b.tokens -= 1.0
        return Admission(known=known)

    def failed(self, address: str, name: str) -> None:
        """Count a failure against the name (the address already paid its token)."""
        now = self.clock()
        if name not in self._names and len(self._names) >= self.max_keys:
            self._prune(now)
        x = self._names.setdefault(name, _Name())
        x.fails += 1
        x.last = now

    def succeeded(self, address: str, name: str) -> None:
        """A good sign-in: the address gets its token back and is known from now on; the
        name's failures are forgotten."""
        now = self.clock()
        b = self._bucket(address, now)
        b.tokens = min(float(self.burst), b.tokens + 1.0)
        self._names.pop(name, None)
        self._known[address] = now
        self._known.move_to_end(address)
        while len(self._known) > self.max_keys:
            self._known.popitem(last=False)

    async def run_hash(self, known: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run a password check in a worker thread: known addresses in their own slot, the
        others in `hash_slots` shared slots."""
        limiter = self._limiters.get(known)
        if limiter is None:
            limiter = self._limiters[known] = anyio.CapacityLimiter(1 if known else self.hash_slots)
        return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)
