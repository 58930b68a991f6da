"""Opening a run for one drive (a segment): the run row by identity — or the run a resume names,
its spec compared —, the lease claimed, the segment begun; and closing the segment with how it
ended. Each is one short transaction of its own (`math2.runs.lifecycle` drives them)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from math2.errors import Math2Error
from math2.runs.identity import RunIdentity, spec_changes
from math2.runs.lease import Holder, claim, now, set_segment
from math2.runs.records import find_run, prior_states
from math2.store.db import Store
from math2.store.upsert import insert_ignore
from math2.store.work import Run, RunLease, RunSegment, RunStatus, SegmentStatus

if TYPE_CHECKING:
    from collections.abc import Callable

    from math2.runs.progress import Progress
    from math2.runs.ray_exec import RayOptions

__all__ = [
    "CannotResume",
    "Executor",
    "Opened",
    "Resume",
    "RunRequest",
    "SpecChanged",
    "close_segment",
    "ending",
    "open_segment",
]


class CannotResume(Math2Error):
    """The run cannot be started again (unknown job, its input gone or changed)."""


class SpecChanged(CannotResume):
    """A resume would run under another spec (another Lean, model or setting): refused unless
    the user allows it (`--allow-changed`); the message lists what changed."""


@dataclass(frozen=True)
class Executor:
    """Where a segment of a run is driven: `local`, or `ray` on the cluster at `address`
    (None: a cluster started for the run) with its `options` (`RaySettings`' fields: what
    `math2 runs resume` drives the run with again)."""

    kind: str = "local"
    address: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resume:
    """`math2 runs resume`: the run to reopen (by id, whatever its spec would be now), whether a
    changed spec is allowed, the executor to drive it on (`ray`: RayOptions, None: here) and
    the progress display."""

    run_id: int
    allow_changed: bool = False
    ray: RayOptions | None = None
    on_progress: Callable[[Progress], None] | None = None

    def local_only(self, job: str) -> None:
        """Refuse a Ray executor for a job that runs only here."""
        if self.ray is not None:
            raise CannotResume(
                f"run {self.run_id}: job {job} runs on the local executor only (--executor local)"
            )


@dataclass(frozen=True)
class RunRequest:
    """What the caller asks of a run, whichever executor drives it: `params` recorded for its
    resume, `resume` (reopen that run), `max_attempts` turns of a failing item, the expected
    `total`, and who sees the progress and each finished item."""

    params: dict[str, Any] = field(default_factory=dict)
    resume: Resume | None = None
    max_attempts: int = 3
    total: int | None = None
    on_progress: Callable[[Progress], None] | None = None
    on_result: Callable[[Any, Any], None] | None = None


@dataclass
class Opened:
    run_id: int
    segment_id: int
    changes: list[str]
    prior: dict[str, tuple[str, int]]


def open_segment(
    store: Store,
    identity: RunIdentity,
    params: dict[str, Any],
    resume: Resume | None,
    executor: Executor,
    me: Holder,
    lease_s: float,
) -> Opened:
    """Open (or create) the run, claim it and begin a segment: one transaction."""
    with store.session() as s:
        if resume is None:
            insert_ignore(
                s,
                Run,
                {
                    "job": identity.job,
                    "key": identity.key,
                    "spec_hash": identity.spec_hash,
                    "spec": identity.spec,
                    "params": params,
                    "stats": {},
                    "status": RunStatus.RUNNING.value,
                },
            )
            run = find_run(s, identity)
            assert run is not None
            changes: list[str] = []
        else:
            found = s.get(Run, resume.run_id)
            if found is None:
                raise CannotResume(f"no run {resume.run_id} in the store (see `math2 runs list`)")
            run = found
            if (run.job, run.key) != (identity.job, identity.key):
                raise CannotResume(
                    f"run {run.id} is job {run.job} on {run.key}; what would run now is job "
                    f"{identity.job} on {identity.key}"
                )
            changes = spec_changes(run.spec or {}, identity.spec)
            if changes and not resume.allow_changed:
                raise SpecChanged(
                    f"run {run.id} would resume under another spec than it ran with: "
                    + "; ".join(changes)
                    + ". Run the command again for a new run with fresh results, or "
                    "`math2 runs resume --allow-changed` to go on under the new one "
                    "(each segment keeps the spec it ran under)"
                )
        gone = claim(s, run.id, me, lease_s)
        dead = (
            select(RunSegment)
            .where(RunSegment.run_id == run.id, RunSegment.status == SegmentStatus.RUNNING)
            .execution_options(populate_existing=True)
        )
        for seg in s.scalars(dead):  # their drivers died: the lease was free
            seg.status = SegmentStatus.KILLED
            seg.reason = (
                gone.why
                if gone is not None and gone.segment_id == seg.id
                else "its driver died (its lease was gone)"
            )
        seg = RunSegment(
            run_id=run.id,
            executor=executor.kind,
            address=executor.address,
            options=executor.options,
            host=me.host,
            pid=me.pid,
            holder=me.holder,
            status=SegmentStatus.RUNNING,
            spec_hash=identity.spec_hash,
            spec=identity.spec,
            changes=changes,
            stats={},
        )
        s.add(seg)
        s.flush()
        set_segment(s, run.id, me, seg.id)
        run.status, run.finished_at = RunStatus.RUNNING, None
        if params:
            run.params = {**(run.params or {}), **params}
        return Opened(run.id, seg.id, changes, prior_states(s, run.id))


def close_segment(
    store: Store,
    opened: Opened,
    me: Holder,
    *,
    status: SegmentStatus,
    reason: str | None,
    stats: dict[str, Any],
    run_status: RunStatus | None,
    unless_finished: bool = False,
) -> bool:
    """End the segment and set the run's status and stats (`run_status` None: leave the run as
    its job set it, a run still `running` becoming `stopped`; `unless_finished`: leave a run its
    job finished); False when the lease was no longer ours (the segment is then `lost` and the
    run left to its new driver)."""
    with store.session() as s:
        held = s.scalar(select(RunLease.holder).where(RunLease.run_id == opened.run_id))
        ours = held is None or held == me.holder
        seg = s.get(RunSegment, opened.segment_id)
        if seg is not None:
            seg.status = status if ours else SegmentStatus.LOST
            seg.reason = reason if ours else "its lease went to another driver"
            seg.stats, seg.ended_at = stats, now()
        run = s.get(Run, opened.run_id)
        if ours and run is not None:
            if run_status is not None and not (unless_finished and run.status == RunStatus.DONE):
                run.status, run.stats, run.finished_at = run_status, stats, now()
            elif run.status == RunStatus.RUNNING:
                run.status = RunStatus.STOPPED
                run.stats = {**stats, "stopped": reason or "ended without finishing"}
        return ours


def ending(exc: BaseException) -> tuple[SegmentStatus, RunStatus, str]:
    """How an exception out of a driver ends its segment and its run."""
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return SegmentStatus.STOPPED, RunStatus.STOPPED, "interrupted"
    why = f"{type(exc).__name__}: {exc}"[:2000]
    return SegmentStatus.FAILED, RunStatus.FAILED, why
