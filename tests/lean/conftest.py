"""Fixtures for the Lean layer: the fake REPL as a real child process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

FAKE = [sys.executable, "-m", "math2.lean.testing.fake_repl"]


def fake_argv(*args: str) -> list[str]:
    """argv that starts the fake REPL with options."""
    return [*FAKE, *args]


@pytest.fixture
def transcripts() -> Path:
    """REPL transcripts written for math2 (tests/fixtures/repl; the REPL's own are the data set
    `lean-repl-transcripts`, read by the conformance tests)."""
    return FIXTURES / "repl"


def requests(log: Path) -> list[str]:
    """The commands the fake REPL logged (empty: nothing reached it)."""
    if not log.exists():
        return []
    cmds = [json.loads(line).get("cmd", "") for line in log.read_text().splitlines()]
    return [c for c in cmds if c != "#eval Lean.versionString"]  # the identity probe


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library_tables) -> Path:
    """A store and a fake REPL (logging to requests.jsonl) for `math2 lean check`, with the
    library's tables of the fixture library (`library_tables`, tests/conftest.py; the store's
    and Lean core's in use; tests/lean/test_library_tables.py reads them from a store)."""
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(fake_argv("--log", str(log))))
    return tmp_path
