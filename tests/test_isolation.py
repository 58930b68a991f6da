"""Each test runs in a folder of its own, with the user's MATH2_* settings and home cleared."""

from __future__ import annotations

import os
from pathlib import Path

from math2.config import load_settings
from tests.conftest import KEEP_ENV, REPO


def test_tests_run_outside_the_checkout_with_settings_cleared() -> None:
    cwd = Path.cwd().resolve()
    assert cwd != REPO and REPO not in cwd.parents
    assert not (cwd / ".math2").exists() and not (cwd / "math2.toml").exists()
    assert not [k for k in os.environ if k.startswith("MATH2_") and k not in KEEP_ENV]
    assert Path(os.environ["HOME"]).resolve().is_relative_to(cwd)
    settings = load_settings()
    assert settings.db_url == "sqlite:///math2.db"  # relative: inside this test's folder
    assert not settings.retrieval.index_dir.is_absolute()
