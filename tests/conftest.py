"""Shared fixtures: stores on SQLite and (where a server is given) PostgreSQL, and data paths."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# One llama-server for the whole session (a fixture imported by several conftests is several
# fixtures: each would start its own server and keep it to the end).
from tests.llm.llama_fixture import llama_server

__all__ = ["llama_server"]

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MATH2_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; the test is skipped (or fails in CI) when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"shared data missing in CI: {path}")
        pytest.skip(f"shared data not present: {path}")
    return path


def _pg_admin_url() -> str | None:
    url = os.environ.get("MATH2_TEST_PG_URL")
    if not url and (os.environ.get("MATH2_REQUIRE_PG") or os.environ.get("CI")):
        pytest.fail("MATH2_REQUIRE_PG is set but MATH2_TEST_PG_URL is not")
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty database: a SQLite file, or a fresh database on the test server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'math2.db'}"
        return
    admin = _pg_admin_url()
    if not admin:
        pytest.skip("no PostgreSQL server (set MATH2_TEST_PG_URL)")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"math2_test_{uuid.uuid4().hex[:12]}"
    admin_url = make_url(admin).set(drivername="postgresql+psycopg")
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


@pytest.fixture
def store(store_url: str):
    """A migrated store on each backend."""
    from math2.store import Store

    s = Store(store_url)
    s.upgrade()
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path: Path):
    """A migrated SQLite store, for tests that do not depend on the backend."""
    from math2.store import Store

    s = Store(f"sqlite:///{tmp_path / 'math2.db'}")
    s.upgrade()
    yield s
    s.close()
