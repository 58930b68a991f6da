"""Settings for tests that talk to the fake model server and the fake Lean REPL (one place)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

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


def cli_env(
    tmp_path: Path,
    monkeypatch: Any,
    base_url: str = "http://127.0.0.1:9/v1",
    *,
    models: tuple[str, ...] = (),
    rules: tuple[str, ...] | list[str] = (),
) -> Any:
    """The same for `math2 …` through typer's CliRunner (returned): the settings as environment
    variables, a store made with `math2 init`, and `models` registered."""
    from typer.testing import CliRunner

    from math2.cli import app

    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    for rule in rules:
        argv += ["--rule", rule]
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MATH2_LLM__BASE_URL", base_url)
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(argv))
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    for m in models:
        res = runner.invoke(app, ["models", "add", m, "--provider", "p", "--terms", "MIT"])
        assert res.exit_code == 0, res.output
    return runner
