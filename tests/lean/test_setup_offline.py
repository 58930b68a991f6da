"""`math2 lean setup` where it cannot work (issue 46 §3): no network, no curl, no elan. Each ends
in one line on stderr, exit 2, saying what to install — never a traceback, never a step that
"succeeds" on a download that failed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app


def _bin(tmp_path: Path, *, curl: str | None) -> Path:
    """A PATH holding only what the elan step's shell needs, and `curl` as given (a script), or
    none."""
    d = tmp_path / "bin"
    d.mkdir()
    for tool in ("sh", "mktemp", "rm"):
        found = shutil.which(tool)
        assert found, tool
        (d / tool).symlink_to(found)
    if curl is not None:
        (d / "curl").write_text("#!/bin/sh\n" + curl)
        (d / "curl").chmod(0o755)
    return d


def _setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bin_dir: Path):
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.elan
    return CliRunner().invoke(app, ["lean", "setup", "--project-dir", str(tmp_path / "p")])


def _one_line_error(res) -> str:
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    # rich wraps long lines at the terminal's width: joined back, the error is one message
    text = " ".join(lines)
    assert text.startswith("error: "), res.stderr
    assert text.count("error:") == 1, res.stderr
    return text


def test_offline_names_elan_and_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # curl as it fails without a network: the download's failure is not masked by `| sh`
    offline = 'echo "curl: (6) Could not resolve host: raw.githubusercontent.com" >&2\nexit 6\n'
    res = _setup(tmp_path, monkeypatch, _bin(tmp_path, curl=offline))
    text = _one_line_error(res)
    assert "step 'elan (Lean toolchain manager)' failed (exit 6)" in text, text
    assert "Could not resolve host" in text and "install elan" in text, text
    assert not (tmp_path / "home" / ".elan").exists()


def test_no_curl_and_no_elan_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _setup(tmp_path, monkeypatch, _bin(tmp_path, curl=None))
    text = _one_line_error(res)
    assert "curl is not installed" in text and "install elan" in text, text


def test_an_elan_installer_that_installs_nothing_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the download "works" but leaves no elan behind: the next step would have started a missing
    # program (the traceback of issue 46); the setup stops at the elan step instead
    res = _setup(tmp_path, monkeypatch, _bin(tmp_path, curl='echo "exit 0"\n'))
    text = _one_line_error(res)
    assert "elan is not there" in text and "install elan" in text, text
    assert "step 'elan (Lean toolchain manager)' ended but elan is not there" in text, text
