"""Reading runs back: the list, one run with its per-state counts, one item's trajectory."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from math2.lean.identity import LeanIdentity
from math2.runs.context import CALL_FAILED
from math2.runs.identity import lean_of
from math2.runs.lease import describe, is_free
from math2.store.work import Attempt, Run, RunItem, RunLease, RunSegment, SegmentStatus

EXAMPLES = 3  # items shown per outcome class


def live_status(session: Session, run: Run) -> str:
    """The run's status, with `killed` for a `running` run whose lease no live driver holds
    (on any executor: the local one, a Ray driver, an import)."""
    if run.status != "running":
        return run.status
    row = session.get(RunLease, run.id)
    if row is None or is_free(row):
        return "killed"
    return run.status


def holder(session: Session, run_id: int) -> str | None:
    """Who drives run `run_id` now, in words; None when no live driver holds it."""
    row = session.get(RunLease, run_id)
    return describe(row) if row is not None and not is_free(row) else None


class SegmentRow(BaseModel):
    """One time the run was driven."""

    id: int
    executor: str
    address: str | None
    options: dict[str, Any]  # the executor's (Ray: `RaySettings`' fields)
    host: str
    pid: int
    status: str
    reason: str | None
    spec_hash: str
    lean: LeanIdentity | None
    changes: list[str]
    stats: dict[str, Any]
    started_at: dt.datetime | None
    ended_at: dt.datetime | None


def segments(session: Session, run_id: int) -> list[SegmentRow]:
    """The run's segments, first first; one still `running` whose driver is gone is `killed`."""
    live = holder(session, run_id) is not None
    rows = session.scalars(
        select(RunSegment).where(RunSegment.run_id == run_id).order_by(RunSegment.id)
    ).all()
    out = []
    for i, seg in enumerate(rows):
        status = seg.status
        if status == SegmentStatus.RUNNING and not (live and i == len(rows) - 1):
            status = SegmentStatus.KILLED.value
        out.append(
            SegmentRow(
                id=seg.id,
                executor=seg.executor,
                address=seg.address,
                options=seg.options or {},
                host=seg.host,
                pid=seg.pid,
                status=status,
                reason=seg.reason,
                spec_hash=seg.spec_hash,
                lean=lean_of(seg.spec or {}),
                changes=list(seg.changes or []),
                stats=seg.stats or {},
                started_at=seg.started_at,
                ended_at=seg.ended_at,
            )
        )
    return out


class RunRow(BaseModel):
    """A run as listed."""

    id: int
    job: str
    key: str
    spec_hash: str
    status: str
    created_at: dt.datetime | None
    finished_at: dt.datetime | None
    items: dict[str, int]
    attempts: int


class AttemptRow(BaseModel):
    """One attempt of an item."""

    id: int
    stage: str
    round: int
    sample: int
    model: str | None
    template_id: str | None
    template_hash: str | None
    verdict: str | None
    error: str | None
    cached: bool
    duration_s: float
    tokens_in: int
    tokens_out: int
    request: dict[str, Any]
    response: dict[str, Any]


class RunDetail(RunRow):
    """A run with its spec, parameters, statistics and failing items."""

    spec: dict[str, Any]
    params: dict[str, Any]
    stats: dict[str, Any]
    failed_items: list[tuple[str, str | None]]
    # the Lean its spec names (None: a run that checks nothing, or one from before runs named
    # it — then `leans` holds what its checks' verdicts say)
    lean: LeanIdentity | None = None
    leans: list[str] = []  # each Lean that compiled for the run, as its verdicts name it
    segments: list[SegmentRow] = []
    holder: str | None = None  # who drives it now
    # Finished items by outcome (passed, failed, no_lean, refused, …), a few examples each.
    outcomes: dict[str, int] = {}
    outcome_examples: dict[str, list[str]] = {}
    defects: dict[str, list[str]] = {}  # item -> the judge's defects in its last judged round
    model_s: float = 0.0  # time in model calls (not cached, not waiting for a slot)
    queue_s: float = 0.0  # time model calls waited for a slot or backed off before a retry
    lean_s: float = 0.0  # time in Lean checks (not waiting for a slot)
    cached_attempts: int = 0
    calls_failed: int = 0  # model calls that brought no reply (every try failed)
    failed_tries: dict[str, int] = {}  # tries without a reply, by kind (connect, timeout, http…)
    finish_reasons: dict[str, int] = {}  # replies by finish reason (stop, length, timeout)


def _counts(session: Session, run_ids: list[int]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {i: {} for i in run_ids}
    rows = session.execute(
        select(RunItem.run_id, RunItem.status, func.count())
        .where(RunItem.run_id.in_(run_ids))
        .group_by(RunItem.run_id, RunItem.status)
    )
    for rid, status, n in rows:
        out[rid][status] = n
    return out


def _attempt_counts(session: Session, run_ids: list[int]) -> dict[int, int]:
    rows = session.execute(
        select(Attempt.run_id, func.count())
        .where(Attempt.run_id.in_(run_ids))
        .group_by(Attempt.run_id)
    )
    return dict(rows.all())


def list_runs(session: Session, job: str | None = None, limit: int = 50) -> list[RunRow]:
    """The newest runs first."""
    q = select(Run).order_by(Run.id.desc()).limit(limit)
    if job:
        q = q.where(Run.job == job)
    runs = list(session.scalars(q))
    ids = [r.id for r in runs]
    counts, attempts = _counts(session, ids), _attempt_counts(session, ids)
    return [RunRow(**_row_fields(session, r, counts, attempts)) for r in runs]


def _row_fields(
    session: Session, r: Run, counts: dict[int, dict[str, int]], attempts: dict[int, int]
) -> dict[str, Any]:
    """A run's `RunRow` fields (the list and the detail show the same)."""
    return {
        "id": r.id,
        "job": r.job,
        "key": r.key,
        "spec_hash": r.spec_hash,
        "status": live_status(session, r),
        "created_at": r.created_at,
        "finished_at": r.finished_at,
        "items": counts[r.id],
        "attempts": attempts.get(r.id, 0),
    }


def run_detail(session: Session, run_id: int) -> RunDetail | None:
    """One run, or None."""
    r = session.get(Run, run_id)
    if r is None:
        return None
    failed = session.execute(
        select(RunItem.item, RunItem.error)
        .where(RunItem.run_id == run_id, RunItem.status == "failed")
        .order_by(RunItem.item)
        .limit(20)
    ).all()
    outcomes: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    defects: dict[str, list[str]] = {}
    rows = session.execute(
        select(RunItem.item, RunItem.result)
        .where(RunItem.run_id == run_id, RunItem.status == "done")
        .order_by(RunItem.item)
    ).all()
    for item, result in rows:
        outcome = str((result or {}).get("outcome", "done"))
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if len(examples.setdefault(outcome, [])) < EXAMPLES:
            examples[outcome].append(item)
        judged = [g for g in (result or {}).get("rounds", []) if g.get("consistent") is not None]
        if judged and judged[-1].get("defects"):
            defects[item] = [
                f"{d.get('kind')}: {d.get('clause', '')}" for d in judged[-1]["defects"]
            ]
    times = session.execute(
        select(Attempt.model, Attempt.cached, func.sum(Attempt.duration_s), func.count())
        .where(Attempt.run_id == run_id)
        .group_by(Attempt.model, Attempt.cached)
    ).all()
    model_s = sum(t or 0 for m, c, t, _ in times if not c and m and not m.startswith("lean:"))
    lean_s = sum(t or 0 for m, c, t, _ in times if not c and m and m.startswith("lean:"))
    calls = _model_calls(session, run_id)
    return RunDetail(
        **calls,
        outcomes=outcomes,
        outcome_examples=examples,
        defects=defects,
        model_s=model_s,
        lean_s=lean_s,
        cached_attempts=sum(n for _, c, _, n in times if c),
        **_row_fields(session, r, _counts(session, [r.id]), _attempt_counts(session, [r.id])),
        spec=r.spec or {},
        params=r.params or {},
        stats=r.stats or {},
        failed_items=[(i, e) for i, e in failed],
        lean=lean_of(r.spec or {}),
        leans=_leans(session, run_id),
        segments=segments(session, run_id),
        holder=holder(session, run_id),
    )


def _leans(session: Session, run_id: int, limit: int = 2000) -> list[str]:
    """The Leans that produced the run's verdicts, as its checks name them (`compiled_by`, a
    `LeanIdentity.label`; the newest `limit` checks are read)."""
    rows = session.scalars(
        select(Attempt.response["compiled_by"].as_string())
        .where(Attempt.run_id == run_id, Attempt.model.like("lean:%"))
        .order_by(Attempt.id.desc())
        .limit(limit)
    )
    return sorted({by for by in rows if by})


def _model_calls(session: Session, run_id: int) -> dict[str, Any]:
    """Queue time, failed calls, failed tries by kind and replies by finish reason, over the
    run's model calls that were made (not answered from the cache)."""
    rows = session.execute(
        select(
            Attempt.verdict,
            Attempt.response["queue_s"].as_float(),
            Attempt.response["failed_tries"],
            Attempt.response["finish_reasons"],
        ).where(
            Attempt.run_id == run_id,
            Attempt.cached.is_(False),
            Attempt.model.is_not(None),
            Attempt.model.not_like("lean:%"),
        )
    )
    queue_s, failed = 0.0, 0
    tries: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for verdict, queued, failed_tries, finish in rows:
        queue_s += queued or 0.0
        failed += verdict == CALL_FAILED
        for t in failed_tries or []:
            kind = str(t.get("kind", "?")) if isinstance(t, dict) else "?"
            tries[kind] = tries.get(kind, 0) + 1
        for f in finish or []:
            reasons[str(f)] = reasons.get(str(f), 0) + 1
    return {
        "queue_s": queue_s,
        "calls_failed": failed,
        "failed_tries": tries,
        "finish_reasons": reasons,
    }


def item_attempts(session: Session, run_id: int, item: str) -> list[AttemptRow]:
    """An item's trajectory: its attempts in order (round, then when they were made)."""
    rows = session.scalars(
        select(Attempt)
        .where(Attempt.run_id == run_id, Attempt.item == item)
        .order_by(Attempt.round, Attempt.id)
    )
    return [AttemptRow.model_validate(a, from_attributes=True) for a in rows]
