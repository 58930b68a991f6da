"""Every way a store can fail to open is a StoreError naming the store and what to do."""

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from math2.store import Store, StoreError, StoreLock, open_store
from math2.store.db import StoreLocked


def _sqlite(path: Path) -> str:
    return f"sqlite:///{path}"


def test_random_bytes_are_not_a_store(tmp_path: Path) -> None:
    f = tmp_path / "math2.db"
    f.write_bytes(os.urandom(8192))
    for migrate in (False, True):
        with pytest.raises(StoreError, match="is not a SQLite database") as info:
            open_store(_sqlite(f), migrate=migrate)
        assert str(f) in str(info.value) and "move it aside" in str(info.value)


def test_a_truncated_store_is_named_as_such(tmp_path: Path) -> None:
    f = tmp_path / "math2.db"
    open_store(_sqlite(f), migrate=True).close()
    with f.open("r+b") as fh:
        fh.truncate(f.stat().st_size // 2)
    with pytest.raises(StoreError, match="truncated"):
        open_store(_sqlite(f))


def test_another_programs_database_is_refused_not_migrated(tmp_path: Path) -> None:
    f = tmp_path / "other.db"
    engine = create_engine(_sqlite(f))
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY)"))
    engine.dispose()
    with pytest.raises(StoreError, match="not math2's \\(customers"):
        open_store(_sqlite(f), migrate=True)
    engine = create_engine(_sqlite(f))
    with engine.connect() as conn:  # nothing was added to it
        names = conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'")).all()
    assert [n for (n,) in names] == ["customers"]


def test_a_store_from_a_newer_math2_is_named(tmp_path: Path) -> None:
    f = tmp_path / "math2.db"
    s = open_store(_sqlite(f), migrate=True)
    with s.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'zz99'"))
    s.close()
    with pytest.raises(StoreError, match="migration zz99, which this math2 does not know"):
        open_store(_sqlite(f), migrate=True)


@pytest.mark.parametrize(
    "url", ["mysql://u:secret@db.example/corpus", "oracle://x@y/z", "not a url://"]
)
def test_unsupported_urls(url: str) -> None:
    with pytest.raises(StoreError, match=r"SQLite|sqlite") as info:
        Store(url)
    assert "secret" not in str(info.value)


def test_unreachable_postgres_is_one_clear_error() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreError, match="cannot reach the PostgreSQL server") as info:
        open_store(f"postgresql://u:pw@127.0.0.1:{port}/corpus")
    assert f"127.0.0.1:{port}" in str(info.value) and "pw" not in str(info.value)


def test_sqlite_in_a_missing_folder_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(_sqlite(tmp_path / "nope" / "math2.db"), migrate=True)
    assert not (tmp_path / "nope").exists()


def test_reading_a_missing_store_creates_no_file(tmp_path: Path) -> None:
    f = tmp_path / "math2.db"
    with pytest.raises(StoreError, match="math2 init"):
        open_store(_sqlite(f))
    with pytest.raises(StoreError, match="math2 init"):
        open_store(_sqlite(f), migrate=True, create=False)
    assert list(tmp_path.iterdir()) == []


def test_the_lock_waits_for_its_holder_then_is_taken(store: Store) -> None:
    order = []
    held = threading.Event()

    def first() -> None:
        with store.lock("build"):
            held.set()
            time.sleep(1.0)
            order.append("first done")

    t = threading.Thread(target=first)
    t.start()
    held.wait(10)
    told: list[str] = []
    with store.session() as s:
        holder = s.get(StoreLock, "build").holder
    assert holder == f"{socket.gethostname()}:{os.getpid()}"
    with store.lock("build", on_wait=told.append):  # waits for the thread's hold to end
        order.append("second")
    t.join()
    assert order == ["first done", "second"] and len(told) == 1
    with store.session() as s:
        assert s.get(StoreLock, "build") is None


def test_a_live_holder_makes_no_wait_exit_and_a_dead_one_is_taken_over(store: Store) -> None:
    host = socket.gethostname()
    with store.session() as s:
        s.add(StoreLock(name="build", holder=f"{host}:{os.getppid()}"))  # alive: our parent
    with (
        pytest.raises(StoreLocked, match="in use by another math2 build") as info,
        store.lock("build", wait=False),
    ):
        pass
    assert store.name in str(info.value)
    told: list[str] = []

    def release() -> None:
        time.sleep(1.0)
        with store.session() as s:
            s.delete(s.get(StoreLock, "build"))

    t = threading.Thread(target=release)
    t.start()
    with store.lock("build", on_wait=told.append):
        pass
    t.join()
    assert len(told) == 1 and "waiting" in told[0]
    # a holder whose process is gone (killed -9 half-way) is taken over at once
    dead = 2**22 + 12345
    with store.session() as s:
        s.add(StoreLock(name="build", holder=f"{host}:{dead}"))
    with store.lock("build", wait=False), store.session() as s:
        assert s.get(StoreLock, "build").holder == f"{host}:{os.getpid()}"


def test_a_store_another_process_is_writing_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    import sqlite3

    from math2.store import Source
    from math2.store import db as dbmod

    f = tmp_path / "math2.db"
    open_store(_sqlite(f), migrate=True).close()

    def short_wait(conn, _record) -> None:
        conn.execute("PRAGMA busy_timeout=200")

    monkeypatch.setattr(dbmod, "_sqlite_pragmas", short_wait)
    store = Store(_sqlite(f))
    other = sqlite3.connect(f, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with (
            pytest.raises(StoreError, match="locked by another process") as info,
            store.session() as s,
        ):
            s.add(Source(name="x"))
        assert str(f) in str(info.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()
