"""Opening the corpus store: engine, sessions, migrations (SQLite default, PostgreSQL by URL)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from math2.errors import Math2Error

log = logging.getLogger(__name__)


class StoreError(Math2Error):
    """The store cannot be opened or is not at the schema this code expects."""


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def make_engine(url: str) -> Engine:
    """An engine for a SQLite path/URL or a PostgreSQL URL (psycopg 3)."""
    if "://" not in url:
        url = f"sqlite:///{url}"
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if db and db != ":memory:":
            Path(db).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(parsed, pool_pre_ping=True)


def _alembic_config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(files("math2.store") / "migrations"))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    """The newest migration this code ships."""
    script = ScriptDirectory.from_config(_alembic_config(create_engine("sqlite://")))
    head = script.get_current_head()
    assert head is not None
    return head


class Store:
    """The corpus database: `Store(url).upgrade()` once, then `with store.session() as s:`."""

    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def upgrade(self, revision: str = "head") -> None:
        """Apply migrations up to `revision` (idempotent)."""
        command.upgrade(_alembic_config(self.engine), revision)

    def current_revision(self) -> str | None:
        """The migration the database is at, or None for an empty database."""
        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def check_schema(self) -> None:
        """Raise StoreError unless the database is at this code's head migration."""
        current, head = self.current_revision(), head_revision()
        if current != head:
            raise StoreError(
                f"store {self.engine.url.render_as_string(hide_password=True)} is at "
                f"migration {current or 'none'}, this math2 needs {head}: run `math2 init`"
            )

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back on any exception."""
        with self._sessions() as s, s.begin():
            yield s

    def close(self) -> None:
        """Release all connections."""
        self.engine.dispose()


def open_store(url: str, *, migrate: bool = False) -> Store:
    """Open a store; with `migrate`, bring it to the head migration first."""
    store = Store(url)
    if migrate:
        store.upgrade()
    else:
        store.check_schema()
    return store
