"""One run lifecycle for every executor (`math2.runs.lifecycle`), on SQLite and PostgreSQL:
a live run is held by its driver's lease — a second driver and `math2 runs resume` are refused
(exit 2) naming the holder —; a driver killed with SIGKILL, or one whose lease expired on another
machine, is taken over; two drivers racing leave one result per item; each drive is a segment."""

from __future__ import annotations

import collections
import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.runs import Executor, RunHeld, run_identity
from math2.runs.claim import open_segment
from math2.runs.lease import Holder
from math2.store import Attempt, Run, RunItem, RunLease, RunSegment, Store
from tests.runs import lifecycle_job

ROOT = Path(__file__).resolve().parents[2]
N = 12


def _turns(log: Path) -> collections.Counter[str]:
    """How many times each item's step ran."""
    return collections.Counter(log.read_text().split()) if log.exists() else collections.Counter()


def _driver(
    store: Store, log: Path, n: int = N, delay_s: float = 0.3, hold: Path | None = None
) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "tests.runs.lifecycle_job", store.url, str(log), str(n)]
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    if hold is not None:
        env[lifecycle_job.HOLD_ENV] = str(hold)
    return subprocess.Popen(
        [*argv, str(delay_s)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(cond, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _leased(store: Store) -> bool:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(RunLease)) == 1


def _cli(store: Store, *args: str):
    return CliRunner().invoke(app, ["--db", store.url, *args])


def _one_result_each(store: Store, n: int = N) -> None:
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 1
        rows = s.scalars(select(RunItem)).all()
        attempts = s.scalar(select(func.count()).select_from(Attempt))
    assert sorted(r.item for r in rows) == [r.id for r in lifecycle_job.records(n)]
    assert all(r.status == "done" for r in rows) and attempts == n


def test_a_second_driver_on_a_live_run_is_refused_naming_its_holder(store, tmp_path) -> None:
    log = tmp_path / "turns.log"
    hold = tmp_path / "release"  # the first driver lives until the test has asked its questions
    first = _driver(store, log, n=16, delay_s=1.0, hold=hold)
    try:
        _wait_for(lambda: _leased(store) and len(_turns(log)) >= 2, "the first driver")
        with store.session() as s:
            run_id = s.scalar(select(Run.id))
        # the same command again, in another process: refused, naming the live holder
        with pytest.raises(RunHeld, match=rf"run {run_id} is being driven by .* pid {first.pid}"):
            lifecycle_job.run(store, str(log), 16, 1.0)
        r = _cli(store, "runs", "resume", str(run_id))
        assert r.exit_code == 2 and f"pid {first.pid}" in r.output, r.output
        r = _cli(store, "runs", "list")
        assert "running" in r.output and "killed" not in r.output
        r = _cli(store, "runs", "show", str(run_id))
        assert "driven by" in r.output and f"pid {first.pid}" in r.output
    finally:
        hold.touch()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    _one_result_each(store, 16)
    assert set(_turns(log).values()) == {1}
    assert not _leased(store)  # given up at the end


def test_a_driver_killed_with_sigkill_is_taken_over(store, tmp_path) -> None:
    log = tmp_path / "turns.log"
    first = _driver(store, log)
    _wait_for(lambda: _done(store) >= 4, "items to finish")
    first.send_signal(signal.SIGKILL)
    first.wait()
    done_before = {r for (r,) in _rows(store, RunItem.item, where=RunItem.status == "done")}
    with store.session() as s:
        run_id = s.scalar(select(Run.id))
    assert "killed" in _cli(store, "runs", "list").output
    summary = lifecycle_job.run(store, str(log), N, 0.3)  # at once: its process is gone
    assert summary.run_id == run_id and summary.skipped == len(done_before)
    _one_result_each(store)
    turns = _turns(log)
    assert all(turns[i] == 1 for i in done_before)  # nothing finished ran again
    with store.session() as s:
        segs = s.scalars(select(RunSegment).order_by(RunSegment.id)).all()
    assert [g.status for g in segs] == ["killed", "done"]
    assert f"pid {first.pid}) died: its process is gone" in segs[0].reason
    assert segs[1].stats["done"] == N - len(done_before)
    r = _cli(store, "runs", "show", str(run_id))
    assert "1. local" in r.output and "· killed" in r.output and "2. local" in r.output
    assert "items per node:" in r.output


def _done(store: Store) -> int:
    with store.session() as s:
        q = select(func.count()).select_from(RunItem).where(RunItem.status == "done")
        return s.scalar(q) or 0


def _rows(store: Store, *cols, where=None):
    with store.session() as s:
        return s.execute(select(*cols).where(where)).all()


def _elsewhere() -> Holder:
    return Holder("far:4242:x", "far", 4242, "far/pid:[1]")


def test_a_lease_from_another_machine_holds_until_it_expires(store, tmp_path) -> None:
    log = tmp_path / "turns.log"
    job = lifecycle_job.job(str(log), 0.0)
    identity = run_identity(job)
    # a driver on another machine holds the run (its pid means nothing here)
    opened = open_segment(store, identity, {}, None, Executor(), _elsewhere(), 60)
    with pytest.raises(RunHeld, match="far pid 4242"):
        lifecycle_job.run(store, str(log), 3, 0.0)
    with store.session() as s:  # …until its lease expires (no heartbeat came)
        lease = s.get(RunLease, opened.run_id)
        lease.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    summary = lifecycle_job.run(store, str(log), 3, 0.0)
    assert summary.run_id == opened.run_id and summary.done == 3
    with store.session() as s:
        segs = s.scalars(select(RunSegment).order_by(RunSegment.id)).all()
    assert [g.status for g in segs] == ["killed", "done"]
    assert "far pid 4242) stopped renewing its lease" in segs[0].reason


def test_a_pid_given_to_a_newer_process_holds_nothing(store, tmp_path) -> None:
    # a lease on this machine whose pid now names a process that started after the lease was
    # taken (the holder died, the system reused its pid): free, whatever its expiry says
    log = tmp_path / "turns.log"
    identity = run_identity(lifecycle_job.job(str(log), 0.0))
    me = Holder.me()
    reused = Holder("h:reused:x", me.host, os.getpid(), me.machine)
    opened = open_segment(store, identity, {}, None, Executor(), reused, 60)
    with store.session() as s:
        lease = s.get(RunLease, opened.run_id)
        lease.acquired_at = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
        lease.expires_at = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    summary = lifecycle_job.run(store, str(log), 3, 0.0)
    assert summary.run_id == opened.run_id and summary.done == 3
    with store.session() as s:
        segs = s.scalars(select(RunSegment).order_by(RunSegment.id)).all()
    assert [g.status for g in segs] == ["killed", "done"]
    assert "died: its process is gone" in segs[0].reason


def test_a_live_holder_on_this_machine_holds_past_its_expiry(store, tmp_path) -> None:
    # the same lease taken after this process started: a live holder whose heartbeat is late
    log = tmp_path / "turns.log"
    identity = run_identity(lifecycle_job.job(str(log), 0.0))
    me = Holder.me()
    opened = open_segment(store, identity, {}, None, Executor(), me, 60)
    with store.session() as s:
        lease = s.get(RunLease, opened.run_id)
        lease.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(hours=5)
    with pytest.raises(RunHeld, match=r"until \d{4}-\d\d-\d\d "):
        lifecycle_job.run(store, str(log), 3, 0.0)


def test_a_holder_whose_lease_was_taken_stops(store, tmp_path) -> None:
    """A driver silent past its expiry finds, at its next renewal, the run taken over: it
    starts no more items and its segment is `lost`; the new driver's run is left alone."""
    import asyncio

    from math2.runs import LeaseLost, drive

    log = tmp_path / "turns.log"
    job = lifecycle_job.job(str(log), 0.2)

    async def silent_then_taken() -> None:
        async with drive(
            store, run_identity(job), executor=Executor(), heartbeat_s=0.1, lease_s=60
        ) as run:
            with store.session() as s:  # another machine takes the run over meanwhile
                s.get(RunLease, run.run_id).holder = "far:4242:y"
            _wait_for(lambda: run.halted, "the lease to be found lost", 10)
            await run.finish()

    with pytest.raises(LeaseLost, match="another driver took the run over"):
        asyncio.run(silent_then_taken())
    with store.session() as s:
        seg = s.scalars(select(RunSegment)).one()
        assert seg.status == "lost" and s.scalar(select(Run.status)) == "running"


def test_two_drivers_racing_leave_one_result_per_item(store, tmp_path) -> None:
    log = tmp_path / "turns.log"
    a, b = _driver(store, log, delay_s=0.1), _driver(store, log, delay_s=0.1)
    outs = [p.communicate(timeout=120) for p in (a, b)]
    codes = sorted(p.returncode for p in (a, b))
    # one drove the run; the other was refused naming it, or came after it and skipped all
    assert codes in ([0, 2], [0, 0]), outs
    if codes == [0, 2]:
        refused = next(err for p, (_, err) in zip((a, b), outs, strict=True) if p.returncode)
        assert "is being driven by" in refused
    _one_result_each(store)
    assert set(_turns(log).values()) == {1}


def test_claims_racing_in_threads_one_wins(store, tmp_path) -> None:
    identity = run_identity(lifecycle_job.job(str(tmp_path / "x.log"), 0.0))
    open_segment(store, identity, {}, None, Executor(), Holder.me(), 60)  # the run row exists
    with store.session() as s:
        s.query(RunLease).delete()
        s.query(RunSegment).delete()
    won: list[int] = []
    refused: list[str] = []
    go = threading.Barrier(6)

    def claim(i: int) -> None:
        me = Holder(f"h:{i}:x", "far", 10_000 + i, f"far{i}/pid:[1]")
        go.wait()
        try:
            open_segment(store, identity, {}, None, Executor(), me, 60)
            won.append(i)
        except RunHeld as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(refused) == 5
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(RunSegment)) == 1
