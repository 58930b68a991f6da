"""Sign-in budgets and known addresses held in the store: exact under concurrency, shared by
every server process, kept across restarts.

A budget is GCRA (the generic cell rate algorithm, as `limits`' and redis-cell's rate limits
use; `limits` keeps its state in memory, Redis, Memcached or MongoDB, not in SQL, hence these
few statements): one row per key with `tat`, the theoretical arrival time. An attempt at `now`
is admitted when `max(tat, now) <= now + (burst - 1) * interval`, and then `tat` becomes
`max(tat, now) + interval`. Both happen in one conditional `UPDATE … WHERE tat <= …`, so of
racing attempts (threads, processes) exactly as many are admitted as the budget holds; a missing
row is written by one `INSERT … ON CONFLICT DO NOTHING` (a full budget) and the update tried
again. Giving an attempt back is `tat - interval`. A row whose `tat` is past is a full budget
and may go (`prune`). `peek` and `wait_for` read a budget without writing: a sign-in refused by
its budgets is answered from one read (no write lock taken); one admitted takes its attempts in
one write transaction afterwards, where the conditional update keeps the count exact whatever
raced in between (`math2.web.throttle`). Every function works in the caller's session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import CursorResult, Result, case, delete, select, update
from sqlalchemy.orm import Session

from math2.store.models import KnownAddress, SigninBudget
from math2.store.upsert import conflict_stmt


@dataclass(frozen=True)
class Budget:
    """`burst` attempts at once, one more every `interval_s` seconds."""

    burst: int
    interval_s: float


def _rows(result: Result[Any]) -> int:
    """How many rows a DML statement changed."""
    return int(cast("CursorResult[Any]", result).rowcount)


def _take(s: Session, key: str, budget: Budget, now: float) -> bool:
    """Take one attempt from `key`'s row if its budget has one: whether it was taken."""
    col = SigninBudget.tat
    start = case((col > now, col), else_=now)
    limit = now + (budget.burst - 1) * budget.interval_s
    stmt = (
        update(SigninBudget)
        .where(SigninBudget.key == key, col <= limit)
        .values(tat=start + budget.interval_s)
        .execution_options(synchronize_session=False)
    )
    return _rows(s.execute(stmt)) == 1


def wait_for(tat: float | None, budget: Budget, now: float) -> float:
    """Seconds until `budget` with theoretical arrival time `tat` (None: no row, a full budget)
    admits an attempt: 0.0 when it would now."""
    if budget.burst < 1:
        return budget.interval_s
    if tat is None:
        return 0.0
    wait = tat - now - (budget.burst - 1) * budget.interval_s
    return wait if wait > 0 else 0.0


def peek(s: Session, keys: Sequence[str]) -> dict[str, float]:
    """The `tat` of each of `keys` that has a row (a read: nothing is taken)."""
    rows = s.execute(select(SigninBudget.key, SigninBudget.tat).where(SigninBudget.key.in_(keys)))
    return {key: tat for key, tat in rows}


def _insert(s: Session, key: str, budget: Budget, now: float) -> bool:
    """Write `key`'s row with one attempt taken, unless a row is there: whether it was written."""
    table = SigninBudget.__table__
    stmt = conflict_stmt(s.get_bind().dialect.name, table, ("key",), returning=("key",))
    return s.execute(stmt, {"key": key, "tat": now + budget.interval_s}).first() is not None


def take(s: Session, key: str, budget: Budget, now: float, *, new: bool = False) -> float:
    """Take one attempt from `key`'s budget: 0.0 when taken, else the seconds until one is
    free (nothing taken). `new`: the key had no row when last read (its row is written first,
    the update tried only when another writer wrote it meanwhile)."""
    if budget.burst < 1:
        return budget.interval_s
    # a missing row is written full less one; a row written meanwhile by another is updated
    steps = (_insert, _take) if new else (_take, _insert, _take)
    if any(step(s, key, budget, now) for step in steps):
        return 0.0
    tat = s.scalar(select(SigninBudget.tat).where(SigninBudget.key == key))
    return max(wait_for(tat, budget, now), 0.001)


def give_back(s: Session, key: str, budget: Budget) -> None:
    """Return one attempt taken from `key` (a good sign-in)."""
    s.execute(
        update(SigninBudget)
        .where(SigninBudget.key == key)
        .values(tat=SigninBudget.tat - budget.interval_s)
        .execution_options(synchronize_session=False)
    )


def is_known(s: Session, address: str, username: str, since: float) -> bool:
    """Whether `username` signed in from `address` at or after `since`."""
    at = s.scalar(
        select(KnownAddress.last_at).where(
            KnownAddress.address == address, KnownAddress.username == username
        )
    )
    return at is not None and at >= since


def remember(s: Session, address: str, username: str, now: float) -> None:
    """`username` signed in from `address` now."""
    dialect = s.get_bind().dialect.name
    s.execute(
        conflict_stmt(dialect, KnownAddress.__table__, ("address", "username"), ("last_at",)),
        {"address": address, "username": username, "last_at": now},
    )


def prune(s: Session, now: float, known_before: float) -> int:
    """Drop full budgets and addresses not used since `known_before`; how many rows went."""
    gone = _rows(s.execute(delete(SigninBudget).where(SigninBudget.tat < now)))
    gone += _rows(s.execute(delete(KnownAddress).where(KnownAddress.last_at < known_before)))
    return gone
