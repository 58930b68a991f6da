"""Settings for tests that talk to the fake model server and the fake Lean REPL (one place)."""

from __future__ import annotations

import sys
from pathlib import Path

from math2.config import LeanSettings, LLMSettings, Settings

# What the fake REPL rejects: an unknown `Evn`, and the `delta` item's type mismatch.
REPL_RULES = ("Evn 2=>error unknown_identifier Evn", "theorem delta=>error type_mismatch h")


def settings_for(
    tmp_path: Path,
    base_url: str,
    repl_log: Path | None = None,
    *,
    rules: tuple[str, ...] | list[str] = REPL_RULES,
    workers: int = 2,
    db: str = "m.db",
) -> Settings:
    """A store in `tmp_path`, the model server at `base_url`, the fake REPL with `rules` (and a
    log of every check it ran at `repl_log`)."""
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    if repl_log is not None:
        argv += ["--log", str(repl_log)]
    for rule in rules:
        argv += ["--rule", rule]
    return Settings(
        db_url=f"sqlite:///{tmp_path / db}",
        llm=LLMSettings(base_url=base_url, concurrency=4),
        lean=LeanSettings(project_dir=tmp_path, repl_command=argv, workers=workers, timeout_s=30),
    )
