"""The rows of a run every executor writes the same way: each item's state (`record_start`,
`record_end`, `record_pending`: session functions of plain values, so they travel to a Ray
worker's writer), how an item's turn ended (`ItemEnd`), and the run row of an identity."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from math2.runs.identity import RunIdentity
from math2.runs.lease import now
from math2.store.upsert import upsert
from math2.store.work import ItemStatus, Run, RunItem, RunStatus

__all__ = [
    "End",
    "ItemEnd",
    "find_run",
    "finish_in",
    "prior_states",
    "record_end",
    "record_pending",
    "record_start",
]


class End(StrEnum):
    """How one item's turn ended."""

    DONE = "done"  # its steps finished (its result may still record a failure)
    FAILED = "failed"  # a step raised
    STOPPED = "stopped"  # the run must stop (an endpoint down): the item stays pending


@dataclass(frozen=True)
class ItemEnd:
    """An item's turn: how it ended, why it failed (raised, or its result records a failure),
    its result's outcome label, and why the run must stop."""

    end: End
    failure: str | None = None
    outcome: str = "done"
    stopped_because: str | None = None


_START = ("status", "attempt_count", "error")
_END = ("status", "result", "error", "stage", "finished_at", "attempt_count")


def record_start(s: Session, run_id: int, item: str, count: int) -> None:
    """Item `item` starts its `count + 1`-th turn."""
    values = {
        "run_id": run_id,
        "item": item,
        "status": ItemStatus.RUNNING.value,
        "attempt_count": count + 1,
        "result": {},
        "error": None,
    }
    upsert(s, RunItem, values, keys=("run_id", "item"), update=_START)


def record_end(
    s: Session,
    run_id: int,
    item: str,
    *,
    attempt_count: int,
    status: ItemStatus,
    result: dict[str, Any],
    error: str | None,
    stage: str | None,
) -> None:
    """Item `item` finished (done or failed) after `attempt_count` turns."""
    values = {
        "run_id": run_id,
        "item": item,
        "status": status.value,
        "attempt_count": attempt_count,
        "result": result,
        "error": error,
        "stage": stage,
        "finished_at": now(),
    }
    upsert(s, RunItem, values, keys=("run_id", "item"), update=_END)


def record_pending(s: Session, run_id: int, item: str, count: int) -> None:
    """Item `item` was stopped before it finished: pending again, the turn not counted."""
    s.execute(
        update(RunItem)
        .where(RunItem.run_id == run_id, RunItem.item == item)
        .values(status=ItemStatus.PENDING.value, attempt_count=count, error=None, result={})
    )


def prior_states(s: Session, run_id: int) -> dict[str, tuple[str, int]]:
    """Each recorded item of the run: (status, turns so far)."""
    rows = s.execute(
        select(RunItem.item, RunItem.status, RunItem.attempt_count).where(RunItem.run_id == run_id)
    )
    return {item: (status, count) for item, status, count in rows}


def find_run(s: Session, identity: RunIdentity) -> Run | None:
    """The run of this identity, if there is one."""
    return s.scalars(
        select(Run).where(
            Run.job == identity.job, Run.key == identity.key, Run.spec_hash == identity.spec_hash
        )
    ).one_or_none()


def finish_in(s: Session, run_id: int, stats: dict[str, Any]) -> None:
    """Mark a run done inside the caller's transaction (an import marks its run done in the
    transaction that wrote its data)."""
    run = s.get(Run, run_id)
    if run is not None:
        run.status, run.stats, run.finished_at = RunStatus.DONE, stats, now()
