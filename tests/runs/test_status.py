"""`runs list` and `runs show` tell a killed run from a running one, by its live holder."""

from __future__ import annotations

import os
import socket

from math2.runs.queries import list_runs, run_detail, run_lock_name
from math2.store.work import Run, StoreLock


def _run(store, status: str = "running") -> int:
    with store.session() as s:
        r = Run(job="t", key="k", spec_hash="h", spec={}, params={}, stats={}, status=status)
        s.add(r)
        s.flush()
        return r.id


def test_a_running_run_without_a_live_holder_is_killed(sqlite_store) -> None:
    rid = _run(sqlite_store)
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "killed" and run_detail(s, rid).status == "killed"
        # a holder whose process is gone is no holder
        s.add(StoreLock(name=run_lock_name(rid), holder=f"{socket.gethostname()}:999999999"))
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "killed"
        s.delete(s.get(StoreLock, run_lock_name(rid)))
        s.add(StoreLock(name=run_lock_name(rid), holder=f"{socket.gethostname()}:{os.getpid()}"))
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "running"


def test_a_finished_run_keeps_its_status(sqlite_store) -> None:
    _run(sqlite_store, "done")
    with sqlite_store.session() as s:
        assert list_runs(s)[0].status == "done"
