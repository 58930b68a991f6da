"""One run lifecycle for every executor: open the run by its identity, claim it, skip what is
finished, record each item, finish — or stop early, or fail — and resume.

    async with drive(store, run_identity(job, provenance), executor=Executor("local")) as run:
        async for rec, count in run.pending(records):  # finished and duplicate items skipped
            run.begin()
            end, value = await run_item(...)              # writes record_start / record_end
            run.end(rec, end, value)                      # counts; an endpoint down stops it
        summary = await run.finish({"utilisation": …})

The executors say only where items run: the local one in this event loop (`runs.engine`), the
Ray one in cluster tasks (`runs.ray_exec`); the importers hold their run with `hold` around
their one transaction. Every one of them:

- opens the run by its identity (`math2.runs.identity`: job, input key, spec with the Lean and
  the models), or — `math2 runs resume ID` — the run `Resume.run_id` names, refusing a spec
  that changed (`SpecChanged` lists what) unless the user allows it;
- claims it with a lease in the store (`math2.runs.lease`): a second driver gets `RunHeld`
  naming the holder; a holder whose lease expired, or whose process is gone, is taken over and
  its segment closed as `killed`;
- records each time the run is driven as a segment (`run_segments`): executor and address, the
  holder, the spec it ran under and what changed, its counts and the items each node ran, and
  how it ended — `done`, `stopped` (with the reason, e.g. the model endpoint that went down; its
  unfinished items stay pending), `failed` (the driver raised), `lost` (its lease went to
  another driver: it stops);
- writes the item states through the same session functions (`record_start`, `record_end`,
  `record_pending`), so a run's items read the same whoever ran them.

The lifecycle's own rows (run, lease, segment) are written in short transactions of their own;
the items' rows go through the executor's writer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from math2.errors import Math2Error
from math2.runs.claim import (
    CannotResume,
    Executor,
    Opened,
    Resume,
    RunRequest,
    SpecChanged,
    close_segment,
    ending,
    open_segment,
)
from math2.runs.identity import RunIdentity
from math2.runs.lease import HEARTBEAT_S, LEASE_S, Holder, Lease, RunHeld
from math2.runs.progress import Progress, RunSummary, finished_stats
from math2.runs.records import (
    End,
    ItemEnd,
    find_run,
    finish_in,
    prior_states,
    record_end,
    record_pending,
    record_start,
)
from math2.store.db import Store
from math2.store.work import ItemStatus, Run, RunStatus, SegmentStatus

__all__ = [
    "CannotResume",
    "ClaimedRun",
    "End",
    "Executor",
    "ItemEnd",
    "LeaseLost",
    "Resume",
    "RunHeld",
    "RunRequest",
    "SpecChanged",
    "drive",
    "find_run",
    "finish_in",
    "hold",
    "prior_states",
    "record_end",
    "record_pending",
    "record_start",
]


class LeaseLost(Math2Error):
    """This driver's lease went to another driver (it was silent past its expiry): it stopped."""


class ClaimedRun:
    """A run claimed by this driver for one segment: what to skip, the counts, how it ends."""

    def __init__(
        self,
        store: Store,
        identity: RunIdentity,
        opened: Opened,
        lease: Lease,
        request: RunRequest,
    ):
        self.store = store
        self.identity = identity
        self.run_id = opened.run_id
        self.segment_id = opened.segment_id
        self.changes = opened.changes
        self.lease = lease
        self.max_attempts = request.max_attempts
        self.progress = Progress(run_id=opened.run_id, job=identity.job, total=request.total)
        self.on_progress = request.on_progress
        self.on_result = request.on_result
        self.stopped_because: str | None = None
        self.finished = False
        self._opened = opened
        self._seen: set[str] = set()
        self._started = time.monotonic()

    @property
    def halted(self) -> bool:
        """No more items may start: the run must stop, or the lease went to another driver."""
        return self.stopped_because is not None or self.lease.lost.is_set()

    def stop(self, reason: str) -> None:
        """Start no more items (those running end their turn); the first reason is kept."""
        if self.stopped_because is None:
            self.stopped_because = reason

    def todo(self, item: str) -> int | None:
        """The turns item `item` had so far, or None when it is not to run now (finished, failed
        `max_attempts` times, or a duplicate of this input)."""
        if item in self._seen:
            self.progress.duplicates += 1
            return None
        self._seen.add(item)
        status, count = self._opened.prior.get(item, (None, 0))
        if status == ItemStatus.DONE or (
            status == ItemStatus.FAILED and count >= self.max_attempts
        ):
            self.progress.skipped += 1
            return None
        return count

    async def pending(
        self, records: Iterable[Any] | AsyncIterable[Any]
    ) -> AsyncIterator[tuple[Any, int]]:
        """The records to run, with their turns so far; the input is read no further once the
        run halts."""
        async for rec in _aiter(records):
            if self.halted:
                return
            count = self.todo(str(rec.id))
            if count is not None:
                yield rec, count

    def begin(self, n: int = 1) -> None:
        self.progress.running += n

    def end(self, rec: Any, item: ItemEnd, value: Any) -> None:
        """Count an item's turn; a turn that says the run must stop stops it."""
        p = self.progress
        p.running -= 1
        if item.end is End.STOPPED:
            self.stop(item.stopped_because or "stopped")
            return
        if item.end is End.FAILED:
            p.failed += 1
            p.outcomes["error"] = p.outcomes.get("error", 0) + 1
            return
        p.done += 1
        p.failed_results += item.failure is not None
        p.outcomes[item.outcome] = p.outcomes.get(item.outcome, 0) + 1
        if self.on_result is not None and value is not None:
            self.on_result(rec, value)

    def snapshot(self, finished: bool = False) -> Progress:
        """The counts now, with the rate and the time left."""
        p = self.progress
        p.elapsed_s = time.monotonic() - self._started
        ended = p.done + p.failed
        p.items_per_s = ended / p.elapsed_s if p.elapsed_s > 0 else 0.0
        left = (p.total or 0) - ended - p.skipped
        p.eta_s = left / p.items_per_s if p.total and p.items_per_s > 0 else None
        p.finished = finished
        return p.model_copy(deep=True)

    async def finish(self, stats: dict[str, Any] | None = None) -> RunSummary:
        """End the segment: `done`, or `stopped` with its reason when the run halted; `stats`
        are the executor's (items per node, utilisation, …). LeaseLost when another driver
        took the run over meanwhile."""
        status = RunStatus.STOPPED if self.stopped_because else RunStatus.DONE
        summary = RunSummary(
            **self.snapshot(finished=True).model_dump(),
            status=status,
            stopped_because=self.stopped_because,
        )
        recorded = {**finished_stats(summary), **(stats or {})}
        if self.stopped_because is not None:
            recorded["stopped"] = self.stopped_because
            if summary.total is not None:
                recorded["unfinished"] = max(
                    0, summary.total - summary.done - summary.failed - summary.skipped
                )
        ours = await asyncio.to_thread(
            close_segment,
            self.store,
            self._opened,
            self.lease.me,
            status=SegmentStatus(status.value),
            reason=self.stopped_because,
            stats=recorded,
            run_status=status,
        )
        self.finished = True
        if not ours:
            raise LeaseLost(
                f"run {self.run_id}: another driver took the run over (this one could not renew "
                "its lease in time); this driver stopped — see `math2 runs show "
                f"{self.run_id}`"
            )
        if self.on_progress:
            self.on_progress(summary)
        return summary


async def _aiter(records: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(records, AsyncIterable):
        async for r in records:
            yield r
    else:
        for r in records:
            yield r


@asynccontextmanager
async def drive(
    store: Store,
    identity: RunIdentity,
    *,
    executor: Executor,
    request: RunRequest | None = None,
    lease_s: float = LEASE_S,
    heartbeat_s: float = HEARTBEAT_S,
) -> AsyncIterator[ClaimedRun]:
    """Claim the run for the block (RunHeld, SpecChanged or CannotResume before anything
    runs); the block ends it with `finish()`. A block that raises ends the segment `failed`
    with the error (`stopped` when interrupted); the lease is given up either way."""
    req = request or RunRequest()
    me = Holder.me()
    opened = await asyncio.to_thread(
        open_segment, store, identity, req.params, req.resume, executor, me, lease_s
    )
    lease = Lease(store, opened.run_id, me, lease_s=lease_s, heartbeat_s=heartbeat_s)
    lease.start()
    run = ClaimedRun(store, identity, opened, lease, req)
    try:
        yield run
        if not run.finished:
            await run.finish()
    except BaseException as exc:
        if not run.finished:
            seg, status, why = ending(exc)
            stats = {**finished_stats(run.snapshot(finished=True)), "error": why}
            await asyncio.shield(
                asyncio.to_thread(
                    close_segment,
                    store,
                    opened,
                    me,
                    status=seg,
                    reason=why,
                    stats=stats,
                    run_status=status,
                )
            )
        raise
    finally:
        await asyncio.shield(asyncio.to_thread(lease.release))


@contextmanager
def hold(
    store: Store,
    identity: RunIdentity,
    *,
    params: dict[str, Any] | None = None,
    executor: Executor | None = None,
    lease_s: float = LEASE_S,
    heartbeat_s: float = HEARTBEAT_S,
) -> Iterator[int]:
    """`drive` for a job that writes its items itself in one transaction (an import): claim the
    run for the block and yield its id; the block marks the run done (`finish_in`). A block that
    raises leaves the run `failed` with the error; the lease is given up either way."""
    me = Holder.me()
    opened = open_segment(store, identity, params or {}, None, executor or Executor(), me, lease_s)
    lease = Lease(store, opened.run_id, me, lease_s=lease_s, heartbeat_s=heartbeat_s)
    lease.start()
    try:
        yield opened.run_id
    except BaseException as exc:
        seg, status, why = ending(exc)
        close_segment(
            store,
            opened,
            me,
            status=seg,
            reason=why,
            stats={"error": why},
            run_status=status,
            unless_finished=True,
        )
        raise
    else:
        with store.session() as s:
            run = s.get(Run, opened.run_id)
            stats = dict(run.stats or {}) if run is not None else {}
        close_segment(
            store, opened, me, status=SegmentStatus.DONE, reason=None, stats=stats, run_status=None
        )
    finally:
        lease.release()
