"""`runs list` and `runs show` tell a killed run from a running one, by its lease's holder."""

from __future__ import annotations

import datetime as dt
import os
import socket

from math2.runs.lease import _machine
from math2.runs.queries import list_runs, run_detail
from math2.store.work import Run, RunLease


def _run(store, status: str = "running") -> int:
    with store.session() as s:
        r = Run(job="t", key="k", spec_hash="h", spec={}, params={}, stats={}, status=status)
        s.add(r)
        s.flush()
        return r.id


def _lease(rid: int, pid: int, *, machine: str | None = None, expires_in_s: float = 60) -> RunLease:
    now = dt.datetime.now(dt.UTC)
    return RunLease(
        run_id=rid,
        holder=f"h:{pid}:x",
        host=socket.gethostname(),
        pid=pid,
        machine=machine or _machine(),
        expires_at=now + dt.timedelta(seconds=expires_in_s),
    )


def test_a_running_run_without_a_live_holder_is_killed(sqlite_store) -> None:
    rid = _run(sqlite_store)
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "killed" and run_detail(s, rid).status == "killed"
        # a holder on this machine whose process is gone holds nothing, whatever its expiry
        s.add(_lease(rid, 999999999))
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "killed"
        s.delete(s.get(RunLease, rid))
        s.add(_lease(rid, os.getpid()))
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "running"
        assert run_detail(s, rid).holder.startswith(f"{socket.gethostname()} pid {os.getpid()}")
        # a live holder on this machine holds even past its expiry (a long transaction can
        # delay its heartbeat): here its process says it lives
        s.get(RunLease, rid).expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "running"


def test_a_holder_on_another_machine_holds_until_its_lease_expires(sqlite_store) -> None:
    rid = _run(sqlite_store)
    with sqlite_store.session() as s:  # its pid means nothing here: only the expiry counts
        s.add(_lease(rid, 999999999, machine="elsewhere/pid:[1]", expires_in_s=60))
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "running"
        s.get(RunLease, rid).expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "killed"


def test_a_finished_run_keeps_its_status(sqlite_store) -> None:
    _run(sqlite_store, "done")
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "done"
