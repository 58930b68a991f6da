"""Fixtures for the Lean layer: the fake REPL as a real child process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import data_file

FAKE = [sys.executable, "-m", "math2.lean.testing.fake_repl"]


def fake_argv(*args: str) -> list[str]:
    """argv that starts the fake REPL with options."""
    return [*FAKE, *args]


@pytest.fixture
def transcripts() -> Path:
    """data/lean-repl-transcripts (vendored)."""
    return data_file("lean-repl-transcripts")
