"""Settings read from `math2.toml` and `MATH2_*` variables (pydantic-settings): values given over
the environment over the file, `__` into a group (case-insensitive), JSON for a list, a table or
a group, and a value that cannot be read is one line naming it (never a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from math2.config import LLMSettings, Settings, SettingsError

TOML = """
db_url = "sqlite:///from-file.db"
[lean]
workers = 5
header = "import Foo"
[llm.endpoints.m1]
base_url = "http://file"
[data]
urls = {hol4 = "file:///from-file"}
"""


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for var in list(os.environ):
        if var.upper().startswith("MATH2_"):
            monkeypatch.delenv(var)
    config = tmp_path / "math2.toml"
    config.write_text(TOML)
    monkeypatch.setenv("MATH2_CONFIG", str(config))
    return config


def test_the_file_then_the_environment_then_values_given(clean_env, monkeypatch) -> None:
    assert Settings().db_url == "sqlite:///from-file.db"
    monkeypatch.setenv("MATH2_DB_URL", "sqlite:///from-env.db")
    monkeypatch.setenv("MATH2_LEAN__WORKERS", "7")
    monkeypatch.setenv("math2_llm__endpoints__m1__api_key", "k")  # names are case-insensitive
    monkeypatch.setenv("MATH2_DATA__URLS", '{"hol4": "file:///from-env", "rocq": "r"}')
    monkeypatch.setenv("MATH2_RETRIEVAL__DENSE_LIBRARIES", '["mathlib"]')
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", '["lake", "env", "repl"]')
    monkeypatch.setenv("MATH2_RAY__RUNTIME_ENV", '{"env_vars": {"A": "1"}}')
    monkeypatch.setenv("MATH2_REQUIRE_RAY", "1")  # not a setting: left alone
    s = Settings()
    assert s.db_url == "sqlite:///from-env.db"
    assert (s.lean.workers, s.lean.header) == (7, "import Foo")  # a group merged, not replaced
    assert s.llm.endpoints["m1"].base_url == "http://file"
    assert s.llm.endpoints["m1"].api_key == "k"
    assert s.data.urls == {"hol4": "file:///from-env", "rocq": "r"}
    assert s.retrieval.dense_libraries == ["mathlib"]
    assert s.lean.repl_command == ["lake", "env", "repl"]
    assert s.ray.runtime_env == {"env_vars": {"A": "1"}}
    given = Settings(db_url="sqlite:///given.db", llm=LLMSettings(model="m"))
    assert given.db_url == "sqlite:///given.db"
    assert given.llm.model == "m" and given.llm.endpoints == {}  # a model given replaces the group
    assert given.lean.workers == 7


def test_a_string_setting_is_not_read_as_json(clean_env, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_LLM__API_KEY", '["not", "a", "list"]')
    monkeypatch.setenv("MATH2_LEAN__HEADER", "42")
    s = Settings()
    assert s.llm.api_key == '["not", "a", "list"]' and s.lean.header == "42"


def test_what_cannot_be_read_is_named(clean_env, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", "lake env repl")
    with pytest.raises(SettingsError, match=r"^MATH2_LEAN__REPL_COMMAND: not JSON"):
        Settings()
    monkeypatch.delenv("MATH2_LEAN__REPL_COMMAND")
    clean_env.write_text("[lean\nworkers = 2\n")
    with pytest.raises(SettingsError, match=f"^{clean_env}: not a TOML config file"):
        Settings()


def test_the_command_line_says_it_in_one_line(clean_env, tmp_path: Path) -> None:
    env = os.environ | {"MATH2_DATA__URLS": "hol4=file:///x"}
    res = subprocess.run(
        [sys.executable, "-m", "math2", "search", "x"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("error: MATH2_DATA__URLS: not JSON (data holds a list, a table or")
