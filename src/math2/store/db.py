"""Opening the corpus store: engine, sessions, migrations (SQLite default, PostgreSQL by URL).

Every way a store can fail to open (a foreign or damaged file, an unsupported URL, a server that
does not answer, a lock) is a `StoreError` naming the store and what to do, never a traceback.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from math2.errors import Math2Error

if TYPE_CHECKING:
    from alembic.config import Config

    from math2.store.writer import SerialWriter

# Alembic is imported where a migration is looked at, not with the store: a process that only
# reads and writes rows (a Ray run's workers, hub and actors) never pays for it.

log = logging.getLogger(__name__)

BACKENDS = ("sqlite", "postgresql")
_SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreError(Math2Error):
    """The store cannot be opened or is not at the schema this code expects."""


class StoreLocked(StoreError):
    """Another math2 process holds the store's lock."""


# How long a write waits for another connection's write to end (SQLite's busy timeout).
BUSY_TIMEOUT_MS = 30000


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.close()


def parse_store_url(url: str) -> URL:
    """The SQLAlchemy URL of a store (a bare path is SQLite); StoreError for anything else."""
    raw = url if "://" in url else f"sqlite:///{url}"
    try:
        parsed = make_url(raw)
        backend = parsed.get_backend_name()
    except ArgumentError as exc:
        raise StoreError(
            f"store URL {url!r} is not a database URL: give a SQLite path, sqlite:///PATH or "
            "postgresql://USER@HOST/DB (MATH2_DB_URL or --db)"
        ) from exc
    if backend not in BACKENDS:
        raise StoreError(
            f"store {parsed.render_as_string(hide_password=True)}: {backend} is not supported; "
            "a math2 store is SQLite (sqlite:///PATH) or PostgreSQL (postgresql://USER@HOST/DB): "
            "set MATH2_DB_URL or --db to one"
        )
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def make_engine(url: str) -> Engine:
    """An engine for a SQLite path/URL or a PostgreSQL URL (psycopg 3)."""
    parsed = parse_store_url(url)
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if db and db != ":memory:" and not Path(db).parent.is_dir():
            raise StoreError(
                f"store {db}: folder {Path(db).parent} does not exist; create it first, or "
                "point MATH2_DB_URL (or --db) at a store in an existing folder"
            )
        engine = create_engine(parsed)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(parsed, pool_pre_ping=True)


def _alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(files("math2.store") / "migrations"))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    """The newest migration this code ships."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_alembic_config(create_engine("sqlite://")))
    head = script.get_current_head()
    assert head is not None
    return head


def _sqlite_file_problem(path: Path) -> str | None:
    """What is wrong with a SQLite file, read from its header alone (cheap), or None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(100)
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size == 0:
        return None  # an empty file is an empty database
    if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
        return "is not a SQLite database (another program's file, or corrupt)"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    # The page count in the header is valid when "version-valid-for" equals the change counter.
    if head[92:96] == head[24:28] and pages and size < pages * page:
        return f"is truncated ({size} bytes; its header says {pages * page})"
    return None


class Store:
    """The corpus database: `Store(url).upgrade()` once, then `with store.session() as s:`."""

    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        # as the user wrote it (the driver math2 adds is not theirs), without a password
        self.name = make_url(url if "://" in url else f"sqlite:///{url}").render_as_string(
            hide_password=True
        )
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock_fh = None
        self._writer: SerialWriter | None = None
        self._writer_pid = 0
        self._writer_lock = threading.Lock()

    @property
    def writer(self) -> SerialWriter:
        """The store's one writer in this process (`math2.store.writer`): every write made while
        a run goes (the async store, the Lean result cache) is committed by it, in order."""
        with self._writer_lock:
            if self._writer is None or self._writer_pid != os.getpid():  # a forked child
                from math2.store.writer import SerialWriter

                self._writer = SerialWriter(self)
                self._writer_pid = os.getpid()
            return self._writer

    @property
    def sqlite_path(self) -> Path | None:
        """The file of a SQLite store (None for PostgreSQL or in-memory)."""
        if self.engine.dialect.name != "sqlite":
            return None
        db = self.engine.url.database
        return Path(db) if db and db != ":memory:" else None

    def exists(self) -> bool:
        """Whether a SQLite store's file is there (a PostgreSQL store always 'exists')."""
        path = self.sqlite_path
        return path is None or path.exists()

    def explain(self, exc: BaseException) -> StoreError | None:
        """A StoreError for a database error that means the store cannot be used, else None."""
        if isinstance(exc, IntegrityError) or not isinstance(exc, DatabaseError):
            return None
        msg = str(getattr(exc, "orig", None) or exc).strip()
        low = msg.lower()
        first = msg.splitlines()[0] if msg else type(exc).__name__
        where = f"store {self.name}"
        if "file is not a database" in low:
            why = "is not a SQLite database (another program's file, or corrupt)"
            return StoreError(f"{where} {why}: {self._aside()}")
        if "malformed" in low or "disk i/o error" in low:
            return StoreError(f"{where} is damaged ({first}): {self._aside()}")
        if "database is locked" in low or "database table is locked" in low:
            return StoreError(
                f"{where} is locked by another process that is writing to it: wait for it to "
                "finish (or stop it), then run the command again"
            )
        if "does not exist" in low and "database" in low:
            db = self.engine.url.database
            return StoreError(
                f"{where}: the server has no database {db!r}; create it (createdb {db}) or "
                "fix MATH2_DB_URL"
            )
        if "password authentication failed" in low or "no password supplied" in low:
            return StoreError(f"{where}: the server refused the login ({first}); fix MATH2_DB_URL")
        unreachable = (
            "connection failed",
            "could not connect",
            "connection refused",
            "could not translate host name",
            "name or service not known",
            "timeout expired",
            "server closed the connection",
            "no route to host",
        )
        if (
            isinstance(exc, OperationalError)
            and self.engine.dialect.name == "postgresql"
            and any(u in low for u in unreachable)
        ):
            return StoreError(
                f"cannot reach the PostgreSQL server of {where} ({first}): start the server, or "
                "fix MATH2_DB_URL (or --db)"
            )
        if "unable to open database" in low or "readonly database" in low:
            return StoreError(f"{where} cannot be opened for writing ({first}): check the file")
        return None

    def _aside(self) -> str:
        return (
            "move it aside (or restore it from a backup) and run `math2 build` to build a new "
            "store, or point MATH2_DB_URL (or --db) at another one"
        )

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Turn database errors that make the store unusable into StoreError."""
        try:
            yield
        except DatabaseError as exc:
            mapped = self.explain(exc)
            if mapped is None:
                raise
            raise mapped from exc

    def probe(self) -> None:
        """Check that the store can be read: file header (SQLite), connection, and that it is
        math2's (or empty). StoreError otherwise."""
        path = self.sqlite_path
        if path is not None and path.exists():
            problem = _sqlite_file_problem(path)
            if problem:
                raise StoreError(f"store {path} {problem}: {self._aside()}")
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory
        from alembic.util import CommandError

        with self.translated(), self.engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            current = MigrationContext.configure(conn).get_current_revision()
        if current is None and tables - {"alembic_version"}:
            some = ", ".join(sorted(tables)[:5])
            raise StoreError(
                f"store {self.name} holds tables that are not math2's ({some}, …) and no math2 "
                "migration: it is another program's database; point MATH2_DB_URL (or --db) at "
                "a math2 store, or at an empty place for a new one"
            )
        if current is not None:
            script = ScriptDirectory.from_config(_alembic_config(self.engine))
            try:
                script.get_revision(current)
            except CommandError as exc:
                raise StoreError(
                    f"store {self.name} is at migration {current}, which this math2 does not "
                    "know (a newer math2 made it?): use that math2, or another store"
                ) from exc

    @contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """One migrating process at a time (a file lock for SQLite, an advisory lock for
        PostgreSQL), so two first builds on one new store do not both create tables."""
        path = self.sqlite_path
        if path is not None:
            # The descriptor stays open until `close()`: closing a descriptor of the database
            # file would drop the POSIX locks that SQLite's own connections hold on it.
            if self._lock_fh is None:
                self._lock_fh = path.open("ab")
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            return
        if self.engine.dialect.name != "postgresql":
            yield
            return
        with self.translated(), self.engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(7412001)"))
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(7412001)"))
                conn.commit()

    def upgrade(self, revision: str = "head") -> None:
        """Apply migrations up to `revision` (idempotent; safe with concurrent callers)."""
        with self._migration_lock():
            self.probe()
            from alembic import command

            with self.translated():
                command.upgrade(_alembic_config(self.engine), revision)

    def current_revision(self) -> str | None:
        """The migration the database is at, or None for an empty database."""
        from alembic.runtime.migration import MigrationContext

        with self.translated(), self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def check_schema(self) -> None:
        """Raise StoreError unless the database is at this code's head migration."""
        self.probe()
        current, head = self.current_revision(), head_revision()
        if current != head:
            raise StoreError(
                f"store {self.name} is at migration {current or 'none'}, this math2 needs "
                f"{head}: run `math2 init`"
            )

    @contextmanager
    def session(self, *, busy_wait_ms: int | None = None) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back on any exception.

        `busy_wait_ms` bounds how long its writes wait for another connection's write (SQLite's
        busy timeout, PostgreSQL's lock_timeout) instead of the default 30 s: `--no-wait`
        answers at once (issue 46 §3)."""
        with self.translated(), self._sessions() as s, s.begin():
            if busy_wait_ms is None:
                yield s
                return
            if self.engine.dialect.name == "postgresql":  # ends with the transaction
                s.connection().exec_driver_sql(f"SET LOCAL lock_timeout = {int(busy_wait_ms)}")
                yield s
                return
            # SQLite: the pragma is the connection's, so the connection goes back to the pool
            # as it came, through the driver's own handle (usable whatever the session's state)
            raw = s.connection().connection.dbapi_connection
            assert raw is not None
            raw.execute(f"PRAGMA busy_timeout={int(busy_wait_ms)}")
            try:
                yield s
                s.flush()  # the writes wait under the bound, not at the commit after it
            finally:
                raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def lock(
        self,
        name: str = "build",
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        poll_s: float = 0.5,
    ) -> AbstractContextManager[None]:
        """Hold the store's named lock for a block (see `math2.store.lock.hold_lock`)."""
        from math2.store.lock import hold_lock

        return hold_lock(self, name, wait=wait, on_wait=on_wait, poll_s=poll_s)

    def close(self) -> None:
        """Commit what the writer holds, then release all connections."""
        if self._writer is not None and self._writer_pid == os.getpid():
            self._writer.close()
        self._writer = None
        self.engine.dispose()
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None


def open_store(url: str, *, migrate: bool = False, create: bool | None = None) -> Store:
    """Open a store; with `migrate`, bring it to the head migration first.

    Only `create` (by default: `migrate`) makes a new SQLite file: a read-only opening of a
    missing store says so and leaves nothing behind.
    """
    store = Store(url)
    if not (migrate if create is None else create) and not store.exists():
        raise StoreError(
            f"no store at {store.sqlite_path}: run `math2 init` (or `math2 build`) to create one, "
            "or point MATH2_DB_URL (or --db) at an existing store"
        )
    if migrate:
        store.upgrade()
    else:
        store.check_schema()
    return store
