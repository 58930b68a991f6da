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
and may go (`prune`). Every function works in the caller's session: one sign-in attempt's reads
and writes are one transaction (`math2.web.throttle`).
"""

from __future__ import annotations

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


def take(s: Session, key: str, budget: Budget, now: float) -> float:
    """Take one attempt from `key`'s budget: 0.0 when taken, else the seconds until one is
    free (nothing taken)."""
    if budget.burst < 1:
        return budget.interval_s
    if _take(s, key, budget, now):
        return 0.0
    dialect = s.get_bind().dialect.name
    table = SigninBudget.__table__
    inserted = s.execute(
        conflict_stmt(dialect, table, ("key",), returning=("key",)),
        {"key": key, "tat": now + budget.interval_s},
    ).first()
    if inserted is not None or _take(s, key, budget, now):
        return 0.0
    tat = s.scalar(select(SigninBudget.tat).where(SigninBudget.key == key))
    wait = (tat or now) - now - (budget.burst - 1) * budget.interval_s
    return max(wait, 0.001)


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
