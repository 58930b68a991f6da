"""`--no-wait` answers at once (issue 46 §3): the lock row is read before anything is written, so
a build that holds the store *and is writing to it* does not make a second one sit out SQLite's
30 s busy timeout, and two tries say the same thing."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.store import StoreLock, open_store
from math2.store import db as dbmod
from math2.store.db import StoreLocked


@pytest.fixture
def busy_store(tmp_path: Path):
    """A SQLite store whose build lock a live process holds (our parent) while another
    connection holds a write transaction open — a build in the middle of its writes."""
    f = tmp_path / "math2.db"
    store = open_store(f"sqlite:///{f}", migrate=True)
    with store.session() as s:
        s.add(StoreLock(name="build", holder=f"{socket.gethostname()}:{os.getppid()}"))
    writer = sqlite3.connect(f, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the write lock, held until the test ends
    store.writer_connection = writer  # type: ignore[attr-defined]  # for a test to write with
    try:
        yield store
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        store.close()


def _refusal(store) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(StoreLocked) as info, store.lock("build", wait=False):
        pass
    return str(info.value), time.monotonic() - started


def test_no_wait_names_the_holder_at_once_and_the_same_each_time(busy_store) -> None:
    assert dbmod.BUSY_TIMEOUT_MS >= 30000  # a write would sit this out before the fix
    first, took = _refusal(busy_store)
    second, _ = _refusal(busy_store)
    assert first == second
    assert f"in use by another math2 build ({socket.gethostname()}:{os.getppid()}" in first
    assert "run again without --no-wait" in first
    # generous (a third of the busy timeout): the old code answered after 30 s or more
    assert took < dbmod.BUSY_TIMEOUT_MS / 3000, took


def test_no_wait_with_a_writer_and_a_dead_holder_says_so(busy_store) -> None:
    # the holder is gone (its row names a pid that is not running) but another connection is
    # still writing: taking the lock over needs a write, which --no-wait does not wait 30 s for
    dead = 2**22 + 12345
    w = busy_store.writer_connection
    w.execute(
        "UPDATE locks SET holder = ? WHERE name = 'build'", (f"{socket.gethostname()}:{dead}",)
    )
    w.execute("COMMIT")  # readers see the dead holder; the writer goes on writing
    w.execute("BEGIN IMMEDIATE")
    message, took = _refusal(busy_store)
    assert "is being written by another process" in message, message
    assert "run again without --no-wait" in message
    assert took < dbmod.BUSY_TIMEOUT_MS / 3000, took


def test_the_cli_no_wait_exits_2_with_one_line(busy_store, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{busy_store.sqlite_path}")
    started = time.monotonic()
    res = CliRunner().invoke(app, ["build", "--offline", "--no-wait"])
    took = time.monotonic() - started
    assert res.exit_code == 2, res.output
    text = " ".join(res.stderr.split())
    assert text.startswith("error: store ") and "in use by another math2 build" in text, text
    assert "Traceback" not in res.output
    assert took < dbmod.BUSY_TIMEOUT_MS / 3000, took


def test_no_wait_with_a_writer_and_no_lock_row_does_not_wait_either(busy_store) -> None:
    # no math2 holder at all, another process writing: the lock row's insert waits at most the
    # no-wait bound (the write happens inside that bound, not at the commit after it)
    w = busy_store.writer_connection
    w.execute("ROLLBACK")
    w.execute("DELETE FROM locks")
    w.execute("BEGIN IMMEDIATE")
    message, took = _refusal(busy_store)
    assert "is being written by another process" in message, message
    assert took < dbmod.BUSY_TIMEOUT_MS / 3000, took
