"""Shared fixtures: stores on SQLite and (where a server is given) PostgreSQL, and data paths."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# The conformance group over the real external data (marker `data`, tests/data_conformance.py).
from tests.data_conformance import (
    pytest_runtest_call,
    pytest_runtest_logreport,
    pytest_runtest_setup,
    pytest_terminal_summary,
)

# One llama-server for the whole session (a fixture imported by several conftests is several
# fixtures: each would start its own server and keep it to the end).
from tests.llm.llama_fixture import llama_server

# pytest-xdist's groups (tests/parallel.py): Ray's tests on one worker, the llama server's on one.
from tests.parallel import pytest_collection_modifyitems, pytest_xdist_make_scheduler

__all__ = [
    "llama_server",
    "pytest_collection_modifyitems",
    "pytest_runtest_call",
    "pytest_runtest_logreport",
    "pytest_runtest_setup",
    "pytest_terminal_summary",
    "pytest_xdist_make_scheduler",
]

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

# Variables of the test machinery itself, kept; every other MATH2_* variable of the user's shell
# is cleared for each test (a test sets what it needs).
KEEP_ENV = {
    "MATH2_REQUIRE_LLM",
    "MATH2_REQUIRE_PG",
    "MATH2_TEST_PG_URL",
    "MATH2_TEST_PG_PORT",
    "MATH2_CHROMIUM",
    "MATH2_LLAMA_SERVER",
    "MATH2_LLAMA_GGUF",
}


def nonempty(values, what: str) -> list:
    """Parameters for `parametrize` that are never empty: with no values, one case that fails
    (an empty parameter set collects nothing and passes silently)."""
    values = list(values)
    if values:
        return values
    # The test then reads a file that does not exist and fails, naming what is missing.
    return [pytest.param(f"<no {what} found>", id=f"no-{what}")]


def benchmark_fixtures() -> Path:
    """A benchmark folder for the tests: small miniF2F/ProofNet/FATE-M-shaped files written for
    math2 (the real sets are not in the repository: FATE-M is an external data set, read by the
    conformance tests; miniF2F's and ProofNet's informal text is evaluation-only)."""
    folder = FIXTURES / "benchmarks"
    for name in ("minif2f.jsonl", "proofnet.jsonl", "fate_m.json"):
        if not (folder / name).is_file():
            pytest.fail(f"benchmark fixture missing: {folder / name}")
    return folder


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory, monkeypatch) -> Iterator[None]:
    """Each test runs in a folder of its own with the user's math2 settings cleared: nothing in
    the working directory (a `math2.toml`, a `.math2/index` that `math2 build` left), the home
    folder or the shell's MATH2_* variables changes a result."""
    work = tmp_path_factory.mktemp("cwd")
    home = work / "home"
    home.mkdir()
    for name in list(os.environ):
        if name.startswith("MATH2_") and name not in KEEP_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    for xdg in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(xdg, str(home / xdg.lower()))
    # git needs an identity for the fixtures' commits once HOME is empty
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "math2 tests")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "tests@math2.invalid")
    monkeypatch.chdir(work)
    yield


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


@pytest.fixture
def library_tables(monkeypatch: pytest.MonkeyPatch):
    """The checker's class, name and scoped-instance tables as a store holding the library gives
    them (issue 41 §2: read from the library, no hand list): the small library written for
    math2 (tests/fixtures/lean_library), in place of `math2.services.lean.library_tables`."""
    from tests.lean.library_fixture import LIBRARY

    monkeypatch.setattr("math2.services.lean.library_tables", lambda settings, store: LIBRARY)
    return LIBRARY
