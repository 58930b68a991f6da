"""A named lock held in the store (a `locks` row): one build or import at a time per store.

A holder on this host whose process is gone (killed with SIGKILL, say), or one whose heartbeat
has been silent for STALE_AFTER_S, is taken over; otherwise a second holder waits, or with
`wait=False` gets StoreLocked naming the store, the holder and what to do.

The row is read before anything is written (a read never waits on SQLite in WAL mode, nor on
PostgreSQL), and with `wait=False` a write waits at most NO_WAIT_BUSY_MS for another
connection's write: `--no-wait` answers at once, with the same words each time, instead of
after SQLite's 30 s busy timeout (issue 46 §3).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError

from math2.store.db import StoreError, StoreLocked
from math2.store.work import StoreLock

if TYPE_CHECKING:
    from math2.store.db import Store

log = logging.getLogger(__name__)

# A lock whose holder has not written a heartbeat for this long is taken over (another host).
STALE_AFTER_S = 600.0
HEARTBEAT_S = 30.0
# With wait=False, how long a write of the lock row waits for another connection's write.
NO_WAIT_BUSY_MS = 200


def _stale(holder: str, heartbeat_at: dt.datetime | None) -> bool:
    """Whether a lock's holder is gone: its process ended (same host), or it went silent."""
    host, _, pid = holder.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    if heartbeat_at is None:
        return True
    if heartbeat_at.tzinfo is None:
        heartbeat_at = heartbeat_at.replace(tzinfo=dt.UTC)
    return (dt.datetime.now(dt.UTC) - heartbeat_at).total_seconds() > STALE_AFTER_S


@contextmanager
def hold_lock(
    store: Store,
    name: str = "build",
    *,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    poll_s: float = 0.5,
) -> Iterator[None]:
    """Hold the lock `name` of `store` for the block (waiting, taking over or refusing)."""
    holder = f"{socket.gethostname()}:{os.getpid()}"
    busy = None if wait else NO_WAIT_BUSY_MS
    told = False
    while True:
        try:
            what = _held_by_another(store, name, busy)  # read first: a read does not wait
            if what is None:
                with store.session(busy_wait_ms=busy) as s:
                    s.add(StoreLock(name=name, holder=holder))
                break
        except IntegrityError:
            continue  # another took it between the read and the write: read it again
        except StoreError as exc:
            if wait:
                raise
            # a write (the lock row, or a dead holder's removal) met another connection's
            # write: name the math2 holder if there is one now, else the writer
            what = _held_by_another(store, name, None, write=False) or (
                f"store {store.name} is being written by another process"
            )
            raise StoreLocked(
                f"{what}: wait for it to finish, or run again without --no-wait"
            ) from exc
        if not wait:
            raise StoreLocked(f"{what}: wait for it to finish, or run again without --no-wait")
        if on_wait and not told:
            on_wait(f"{what}: waiting for it to finish")
            told = True
        time.sleep(poll_s)
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(store, name, holder, stop), daemon=True, name="store-lock"
    )
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()
        with store.session() as s:
            s.execute(delete(StoreLock).where(StoreLock.name == name, StoreLock.holder == holder))


def _held_by_another(
    store: Store, name: str, busy_wait_ms: int | None, *, write: bool = True
) -> str | None:
    """Who holds the lock, in words, or None when it is free or its holder is gone (whose row
    is deleted where `write`: whatever a dead holder held dies with it)."""
    while True:
        with store.session() as s:
            row = s.get(StoreLock, name)
            if row is None:
                return None
            if not _stale(row.holder, row.heartbeat_at):
                return (
                    f"store {store.name} is in use by another math2 {name} ({row.holder}, "
                    f"since {row.acquired_at:%Y-%m-%d %H:%M:%S})"
                )
            stale = row.holder
        if not write:
            return None
        log.info("taking over the stale %s lock of %s", name, stale)
        with store.session(busy_wait_ms=busy_wait_ms) as s:
            s.execute(delete(StoreLock).where(StoreLock.name == name, StoreLock.holder == stale))


def _heartbeat(store: Store, name: str, holder: str, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_S):
        try:
            with store.session() as s:
                s.execute(
                    update(StoreLock)
                    .where(StoreLock.name == name, StoreLock.holder == holder)
                    .values(heartbeat_at=dt.datetime.now(dt.UTC))
                )
        except Exception:  # a busy store delays a heartbeat; the next one will do
            log.debug("lock heartbeat skipped", exc_info=True)
