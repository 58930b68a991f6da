"""Helpers for tests that run `math2` as a user would: a small manifest, a clean environment,
and the command in a subprocess (so that a traceback would be seen as one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

SMALL_MM = """$( demo $)
$c ( ) -> wff |- $.
$v ph ps $.
wph $f wff ph $.
wps $f wff ps $.
wi $a wff ( ph -> ps ) $.
${
  min $e |- ph $.
  maj $e |- ( ph -> ps ) $.
  $( Modus ponens, the rule of detachment.  (Contributed by NM, 5-Aug-1993.) $)
  ax-mp $a |- ps $.
$}
$( The identity law for implication, proved in one step here.
   (Contributed by NM, 5-Aug-1993.) $)
id $p |- ( ph -> ph ) $= ? $.
"""


def small_manifest(
    folder: Path, keep: tuple[str, ...] = ("setmm",), mathlib_commit: str | None = None
) -> Path:
    """The real manifest cut down to `keep` (and Mathlib's pin moved to `mathlib_commit`)."""
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    data["sources"] = [s for s in data["sources"] if s["name"] in keep]
    for s in data["sources"]:
        if s["name"] == "mathlib" and mathlib_commit:
            s["pins"][-1]["commit"] = mathlib_commit
    path = folder / "sources.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def user_env(folder: Path, **extra: str) -> dict[str, str]:
    """An environment with no MATH2_* settings of the caller's, a store and a manifest in
    `folder`, and no crosswalk data (an empty folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MATH2_")}
    empty = folder / "no-lists"
    empty.mkdir(exist_ok=True)
    env.update(
        MATH2_DB_URL=f"sqlite:///{folder / 'math2.db'}",
        MATH2_DATA__CROSSWALK_DIR=str(empty),
        MATH2_RETRIEVAL__INDEX_DIR=str(folder / "index"),
        MATH2_DATA__CACHE_DIR=str(folder / "cache"),
        MATH2_CONFIG=str(folder / "none.toml"),
    )
    env.update(extra)
    return env


def math2(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`math2 ARGS` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "math2", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assert_clean_error(res: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2, one line on stderr starting `error:`, no traceback, and each needle in it."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr + res.stdout, res.stderr
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error:"), res.stderr
    text = " ".join(ln.strip() for ln in lines)
    for n in needles:
        assert n in text, (n, text)


def pinned_manifest(
    folder: Path, pins: dict[str, str], keep: tuple[str, ...] | None = None, **fields: dict
) -> Path:
    """The real manifest with each source of `pins` pinned at that commit alone (cut down to
    `keep` when given; `fields[NAME]` adds to or overrides a source's fields)."""
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    if keep is not None:
        data["sources"] = [s for s in data["sources"] if s["name"] in keep]
    for s in data["sources"]:
        if s["name"] in pins:
            s.pop("unpinned_reason", None)
            s["pins"] = [{"commit": pins[s["name"]]}]
        s.update(fields.get(s["name"].replace("-", "_"), {}))
    path = folder / "sources.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
