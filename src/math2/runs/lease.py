"""The claim of a run: a lease in the store (`run_leases`, one row per run), renewed by a
heartbeat, so one driver at a time executes a run — processes on one SQLite file, machines on
one PostgreSQL.

A claim inserts the row, or takes over a free one by a conditional update (the holder that was
read must still be there: of two drivers taking over at once, one wins). A lease held on this
machine (same host name and process namespace) is free once its holder's process is gone — a
driver killed with SIGKILL is taken over at once —; one held on another machine once its expiry
passed (`LEASE_S` after the last heartbeat). A held lease refuses the claim with `RunHeld`,
naming the holder. The expiry is written by the holder's clock: machines sharing a store keep
their clocks in step (NTP), far closer than `LEASE_S`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import socket
import threading
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select, update
from sqlalchemy.orm import Session

from math2.errors import Math2Error
from math2.store.db import Store
from math2.store.upsert import insert_ignore
from math2.store.work import RunLease

log = logging.getLogger(__name__)

LEASE_S = 120.0  # a lease not renewed for this long is free to take over
HEARTBEAT_S = 20.0  # how often the holder renews it

__all__ = [
    "HEARTBEAT_S",
    "LEASE_S",
    "Holder",
    "Lease",
    "RunHeld",
    "TakenOver",
    "claim",
    "describe",
    "is_free",
    "now",
    "set_segment",
]


class RunHeld(Math2Error):
    """Another live driver holds the run (exit 2: its holder is named)."""


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(t: dt.datetime) -> dt.datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.UTC)  # SQLite reads back naive


def _machine() -> str:
    """This machine as a lease tells it: the host name and the process namespace (two containers
    with one host name are two machines)."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    return f"{socket.gethostname()}/{ns}"


@dataclass(frozen=True)
class Holder:
    """Who claims: this process, with a nonce so that each claim is its own holder."""

    holder: str
    host: str
    pid: int
    machine: str

    @classmethod
    def me(cls) -> Holder:
        host, pid = socket.gethostname(), os.getpid()
        return cls(f"{host}:{pid}:{secrets.token_hex(4)}", host, pid, _machine())


def _rows(result: Any) -> int:
    """How many rows an UPDATE touched."""
    return int(cast("CursorResult[Any]", result).rowcount)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def is_free(row: RunLease, at: dt.datetime | None = None) -> bool:
    """Whether a lease may be taken over: its holder's process is gone (on this machine, where
    that is known: a live one holds even when a long transaction delayed its heartbeat), or its
    expiry passed (from another machine)."""
    if row.machine == _machine():
        return not _alive(row.pid)
    return _aware(row.expires_at) <= (at or now())


def _why_free(row: RunLease) -> str:
    who = f"{row.host} pid {row.pid}"
    if row.machine == _machine():
        return f"its driver ({who}) died: its process is gone"
    return (
        f"its driver ({who}) stopped renewing its lease (expired "
        f"{_aware(row.expires_at):%Y-%m-%d %H:%M:%S} UTC)"
    )


def describe(row: RunLease) -> str:
    """The holder in words: `host pid 123 (lease renewed 12:00:01, until 12:02:01 UTC)`."""
    beat, until = _aware(row.heartbeat_at), _aware(row.expires_at)
    return (
        f"{row.host} pid {row.pid} (lease renewed {beat:%Y-%m-%d %H:%M:%S}, "
        f"until {until:%H:%M:%S} UTC)"
    )


@dataclass(frozen=True)
class TakenOver:
    """A lease a claim took over: why it was free and the segment it was driving."""

    why: str
    segment_id: int | None


def claim(s: Session, run_id: int, me: Holder, lease_s: float = LEASE_S) -> TakenOver | None:
    """Claim run `run_id` in the caller's transaction; the lease taken over, if any. Raises
    RunHeld naming a live holder."""
    t = now()
    values = {
        "holder": me.holder,
        "host": me.host,
        "pid": me.pid,
        "machine": me.machine,
        "acquired_at": t,
        "heartbeat_at": t,
        "expires_at": t + dt.timedelta(seconds=lease_s),
    }
    if insert_ignore(s, RunLease, {"run_id": run_id, **values}, returning="run_id") is not None:
        return None
    row = s.scalars(
        select(RunLease).where(RunLease.run_id == run_id).execution_options(populate_existing=True)
    ).one()
    if not is_free(row, t):
        raise RunHeld(f"run {run_id} is being driven by {describe(row)}")
    gone = TakenOver(why=_why_free(row), segment_id=row.segment_id)
    took = _rows(
        s.execute(
            update(RunLease)
            .where(RunLease.run_id == run_id, RunLease.holder == row.holder)
            .values(**values, segment_id=None)
            .execution_options(synchronize_session=False)
        )
    )
    if took != 1:  # another driver took it over between our read and our update
        s.expire(row)
        now_row = s.get(RunLease, run_id)
        who = describe(now_row) if now_row is not None else "another driver"
        raise RunHeld(f"run {run_id} is being driven by {who}")
    return gone


def set_segment(s: Session, run_id: int, me: Holder, segment_id: int) -> None:
    """Record on our lease the segment we drive (a later takeover closes it as killed)."""
    s.execute(
        update(RunLease)
        .where(RunLease.run_id == run_id, RunLease.holder == me.holder)
        .values(segment_id=segment_id)
        .execution_options(synchronize_session=False)
    )


class Lease:
    """A claimed run's lease, renewed by a thread every `heartbeat_s` until `release()`.

    `lost` is set when a renewal finds the row gone to another holder (this driver was silent
    past its expiry and was taken over): the driver must stop.
    """

    def __init__(
        self,
        store: Store,
        run_id: int,
        me: Holder,
        *,
        lease_s: float = LEASE_S,
        heartbeat_s: float = HEARTBEAT_S,
    ):
        self.store = store
        self.run_id = run_id
        self.me = me
        self.lease_s = lease_s
        self.heartbeat_s = heartbeat_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._beat, name=f"run-{self.run_id}-lease", daemon=True
        )
        self._thread.start()

    def renew(self) -> bool:
        """Push the expiry on; False when the lease is no longer ours."""
        t = now()
        with self.store.session() as s:
            n = _rows(
                s.execute(
                    update(RunLease)
                    .where(RunLease.run_id == self.run_id, RunLease.holder == self.me.holder)
                    .values(heartbeat_at=t, expires_at=t + dt.timedelta(seconds=self.lease_s))
                    .execution_options(synchronize_session=False)
                )
            )
        return n == 1

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                if not self.renew():
                    log.warning("run %s: the lease went to another driver", self.run_id)
                    self.lost.set()
                    return
            except Exception:  # a busy or unreachable store delays a renewal; the next one will do
                log.debug("run %s: lease renewal skipped", self.run_id, exc_info=True)

    def release(self) -> None:
        """Stop renewing and give the lease up (a no-op when it went to another driver)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self.store.session() as s:
            s.execute(
                delete(RunLease).where(
                    RunLease.run_id == self.run_id, RunLease.holder == self.me.holder
                )
            )
