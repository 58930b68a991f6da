"""Sign-in throttling that slows a guesser without closing sign-in to the team.

Following OWASP's authentication guidance (throttle per account as well as per source, do not
let a lockout become a denial of service, a known device skips the account's limit), with every
budget kept in the store (`math2.web.budgets`: shared by every server process, exact under
concurrency, kept across restarts):

- Per client address, a budget of `address_burst` attempts, one more every `address_interval_s`;
  a good sign-in gives its attempt back.
- Per account name, a budget of `name_burst` attempts, one more every `name_interval_s`, taken
  by every attempt on that name except from an address the name signed in from within
  `known_for_s` (a known address). A flood against `alice` empties `alice`'s budget only: `bob`
  signs in from anywhere, and `alice` from an address she used before. A name that is no account
  is treated alike (its refusals say nothing of which names exist).
- A refusal is answered at once with a small 429 and `Retry-After`, before any hashing, without
  the page template (`refusal`), from one read of the store: nothing is written for it.
- Only names that are accounts cost a password hash (argon2, in worker threads: one slot for
  known addresses, `hash_slots` for the others); an attempt on any other name waits about as
  long as a hash takes (`hash_seconds`) without using a core. A flood over random names thus
  costs the server no hashing, and one over the team's names at most their budgets.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any, TypeVar

import anyio
from starlette.responses import HTMLResponse

from math2.store import Store
from math2.web import budgets
from math2.web.budgets import Budget

T = TypeVar("T")


@dataclass(frozen=True)
class Admission:
    """Whether one sign-in attempt goes on: `wait` 0 (go) or the seconds to wait, with `why`
    the reason shown; `known`: the address is one the name signed in from; `took_name`: the
    attempt took from the name's budget (given back on success)."""

    wait: float = 0.0
    why: str = ""
    known: bool = False
    took_name: bool = False


def refusal(admission: Admission) -> HTMLResponse:
    """The 429 of a refused attempt: a few hundred bytes, no template, no store."""
    secs = max(1, math.ceil(admission.wait))
    body = (
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>Too many sign-ins</title>'
        f'<p>{escape(admission.why)}</p><p><a href="/login">Sign in</a></p></html>'
    )
    return HTMLResponse(body, status_code=429, headers={"Retry-After": str(secs)})


def _address_refusal(wait: float) -> Admission:
    secs = math.ceil(wait)
    return Admission(wait, f"Too many sign-ins from your address: wait {secs} s and try again.")


def _name_refusal(wait: float) -> Admission:
    secs = math.ceil(wait)
    return Admission(
        wait,
        f"Too many sign-ins for this name lately: wait {secs} s and try again, or sign in from "
        "an address you signed in from before.",
    )


@dataclass
class LoginThrottle:
    """The budgets above over `store` (set by `create_app` when not given); `clock` is Unix
    time (shared by processes)."""

    store: Store | None = None
    address_burst: int = 10
    address_interval_s: float = 30.0
    name_burst: int = 5
    name_interval_s: float = 30.0
    known_for_s: float = 30 * 86400.0
    hash_slots: int = 1
    admit_slots: int = 1
    prune_every: int = 500
    clock: Callable[[], float] = time.time
    _limiters: dict[bool, anyio.CapacityLimiter] = field(default_factory=dict)
    _admitting: list[anyio.CapacityLimiter] = field(default_factory=list)
    _hash_s: list[float] = field(default_factory=list)
    _count: int = 0

    @property
    def address_budget(self) -> Budget:
        return Budget(self.address_burst, self.address_interval_s)

    @property
    def name_budget(self) -> Budget:
        return Budget(self.name_burst, self.name_interval_s)

    def _store(self) -> Store:
        if self.store is None:
            raise RuntimeError("the sign-in throttle has no store")
        return self.store

    def is_known(self, address: str, name: str) -> bool:
        """Whether `name` signed in from `address` within `known_for_s`."""
        now = self.clock()
        with self._store().session() as s:
            return budgets.is_known(s, address, name, now - self.known_for_s)

    def admit(self, address: str, name: str) -> Admission:
        """May this attempt be checked? Takes the address's attempt, and the name's unless the
        address is known to it; takes nothing when refused. Blocking: call it from a thread.

        First one read (the budgets and whether the address is known): an attempt its budgets
        refuse is answered from it, with no write and no write lock. Then one write transaction
        takes the attempts; its conditional updates keep the budgets exact against whatever
        raced in between (refused there, nothing stays taken)."""
        now = self.clock()
        a_key, n_key = f"a:{address}", f"n:{name}"
        with self._store().session() as s:
            tats = budgets.peek(s, (a_key, n_key))
            known = budgets.is_known(s, address, name, now - self.known_for_s)
        wait = budgets.wait_for(tats.get(a_key), self.address_budget, now)
        if wait:
            return _address_refusal(wait)
        if not known and (wait := budgets.wait_for(tats.get(n_key), self.name_budget, now)):
            return _name_refusal(wait)
        self._count += 1
        with self._store().session() as s:
            if self._count % self.prune_every == 0:
                budgets.prune(s, now, now - self.known_for_s)
            wait = budgets.take(s, a_key, self.address_budget, now, new=a_key not in tats)
            if wait:
                return _address_refusal(wait)
            if known:
                return Admission(known=True)
            wait = budgets.take(s, n_key, self.name_budget, now, new=n_key not in tats)
            if wait:
                budgets.give_back(s, a_key, self.address_budget)
                return _name_refusal(wait)
        return Admission(took_name=True)

    def succeeded(self, address: str, name: str, admission: Admission) -> None:
        """A good sign-in: its attempts go back, and the address is known to the name."""
        with self._store().session() as s:
            budgets.give_back(s, f"a:{address}", self.address_budget)
            if admission.took_name:
                budgets.give_back(s, f"n:{name}", self.name_budget)
            budgets.remember(s, address, name, self.clock())

    def hash_seconds(self) -> float:
        """About how long one password check takes here (the median of the last ones)."""
        if not self._hash_s:
            return 0.1
        return sorted(self._hash_s)[len(self._hash_s) // 2]

    async def run_admit(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn` (the budgets' read and write: `admit`, and what goes with it) in a worker
        thread, at most `admit_slots` at once, in the order the attempts came (anyio's limiter
        is first come, first served). A flood's attempts thus queue here instead of racing for
        the store's write lock and the interpreter's: on SQLite a waiting writer sleeps and
        retries, and a newcomer can take the lock before it, so a reviewer's attempt could wait
        behind every attacker's; here it waits behind those that came before it only."""
        if not self._admitting:
            self._admitting.append(anyio.CapacityLimiter(self.admit_slots))
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._admitting[0])

    async def run_hash(self, known: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run a password check (and, in the same trip, what a good one starts) in a worker
        thread: known addresses in their own slot, the others in `hash_slots` shared slots; its
        time is kept for `hash_seconds`."""
        limiter = self._limiters.get(known)
        if limiter is None:
            limiter = self._limiters[known] = anyio.CapacityLimiter(1 if known else self.hash_slots)
        async with limiter:
            t = time.perf_counter()
            result = await anyio.to_thread.run_sync(fn, *args)
            self._hash_s[:] = [*self._hash_s[-15:], time.perf_counter() - t]
        return result
