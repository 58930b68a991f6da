"""Mathlib at its pin by the build itself: a shallow fetch of the pinned commit from a git
repository (here always a local one over file://, never the internet), verified, cached, then
imported; offline or unreachable, the build says what it skipped and how to supply it; killed
with SIGKILL anywhere (the fetch included) and rerun, it converges to the same corpus."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.fetch import FetchError, cached_checkout, fetch_pinned, head_commit
from math2.report import export_rows
from math2.store import Run, open_store
from tests.build_helpers import SMALL_MM, math2, small_manifest, user_env
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "leanproj"
GIT = ["-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> str:
    res = subprocess.run(
        ["git", "-C", str(repo), *GIT, *args], capture_output=True, text=True, check=True
    )
    return res.stdout.strip()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> tuple[Path, str, str]:
    """A git repository holding the fixture Lean project (plus 8 MB of noise, so that a fetch
    takes long enough to be interrupted), with the pinned commit below a later one."""
    repo = tmp_path_factory.mktemp("upstream") / "mathlib4"
    shutil.copytree(FIXTURE, repo)
    (repo / "noise.bin").write_bytes(os.urandom(8 << 20))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "the pinned commit")
    pinned = _git(repo, "rev-parse", "HEAD")
    (repo / "Mathlib" / "Later.lean").write_text("theorem later : True := trivial\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "a later commit")
    return repo, pinned, _git(repo, "rev-parse", "HEAD")


def test_fetch_the_pinned_commit_verify_and_reuse(upstream, tmp_path: Path) -> None:
    repo, pinned, later = upstream
    said: list[str] = []
    path = fetch_pinned(f"file://{repo}", pinned, tmp_path / "cache", "mathlib", said.append)
    assert head_commit(path) == pinned and path.name == f"mathlib-{pinned}"
    assert not (path / "Mathlib" / "Later.lean").exists()  # the pin, not the branch tip
    assert _git(path, "rev-list", "--count", "HEAD") == "1"  # shallow
    assert any("verified" in s for s in said) and any("fetching" in s for s in said)
    again = fetch_pinned("file:///nowhere/at/all", pinned, tmp_path / "cache", "mathlib")
    assert again == path  # from the cache: no fetch
    # a cached folder that is not at the pin is not trusted
    _git(path, "fetch", "-q", "--depth", "1", f"file://{repo}", later)
    _git(path, "checkout", "-q", "--detach", "FETCH_HEAD")
    assert cached_checkout(tmp_path / "cache", "mathlib", pinned) is None
    path = fetch_pinned(f"file://{repo}", pinned, tmp_path / "cache", "mathlib")
    assert head_commit(path) == pinned


def test_a_commit_the_server_lacks_leaves_nothing(upstream, tmp_path: Path) -> None:
    repo, _, _ = upstream
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match="git fetch failed"):
        fetch_pinned(f"file://{repo}", "0" * 40, cache, "mathlib")
    assert list(cache.iterdir()) == []
    with pytest.raises(FetchError, match="not a full 40-hex commit"):
        fetch_pinned(f"file://{repo}", "f4a7505", cache, "mathlib")


def test_a_half_done_fetch_is_cleaned_up(upstream, tmp_path: Path) -> None:
    repo, pinned, _ = upstream
    cache = tmp_path / "cache"
    half = cache / f"mathlib-{pinned}.partial-99999"
    (half / ".git").mkdir(parents=True)
    path = fetch_pinned(f"file://{repo}", pinned, cache, "mathlib")
    assert not half.exists() and head_commit(path) == pinned


def _env(home: Path, pinned: str, url: str, db_url: str | None = None) -> dict[str, str]:
    (home / "set.mm").write_text(SMALL_MM)
    manifest = small_manifest(home, ("setmm", "mathlib"), mathlib_commit=pinned)
    env = user_env(
        home,
        MATH2_MANIFEST=str(manifest),
        MATH2_DATA__SETMM=str(home / "set.mm"),
        MATH2_DATA__MATHLIB_URL=url,
    )
    if db_url:
        env["MATH2_DB_URL"] = db_url
    return env


def test_build_fetches_imports_and_indexes_mathlib(upstream, tmp_path: Path) -> None:
    repo, pinned, _ = upstream
    env = _env(tmp_path, pinned, f"file://{repo}")
    res = math2(["build"], env, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "imported  mathlib" in res.stdout
    last = res.stdout.strip().splitlines()[-1]  # the summary, not a stage's counter
    assert last.startswith(
        "math2 build: 2 sources imported, 0 skipped, 0 failed"
    ) and last.endswith("; exit 0"), last
    assert f"fetching mathlib at {pinned[:12]}" in res.stderr and "verified" in res.stderr
    assert "search index mathlib" in res.stdout and "search index setmm" in res.stdout
    # without a terminal, a line per stage (math2.util.progress) with its count and time
    assert "scan Mathlib: 2/2 files (100%) in " in res.stderr, res.stderr
    # git's progress phases are stages too (over file:// git shows counting and compressing)
    assert "git fetch: counting objects: " in res.stderr and " objects (100%) in " in res.stderr
    assert "import mathlib: done in " in res.stderr and "import setmm: done in " in res.stderr
    assert "search index mathlib: " in res.stderr and " declarations (100%) in " in res.stderr
    # no dense part by default (retrieval.dense_libraries is empty)
    line = next(ln for ln in res.stdout.splitlines() if "search index mathlib" in ln)
    assert "no dense embeddings (opt in" in line, res.stdout
    res = math2(["search", "idf apply", "--library", "mathlib", "-k", "3"], env, tmp_path)
    assert res.returncode == 0 and "Demo.idf_apply" in res.stdout, res.stderr
    assert "+ dense" not in res.stderr, res.stderr
    # a library in retrieval.dense_libraries gets it, the others not
    env["MATH2_RETRIEVAL__DENSE_LIBRARIES"] = '["mathlib"]'
    res = math2(["build"], env, tmp_path)
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if "search index mathlib" in ln)
    assert "dense embeddings in 1 chunks" in line, res.stdout
    line = next(ln for ln in res.stdout.splitlines() if "search index setmm" in ln)
    assert "up to date" in line, res.stdout
    res = math2(["search", "idf apply", "--library", "mathlib", "-k", "3"], env, tmp_path)
    assert "+ dense" in res.stderr, res.stderr
    # a second build finds the index whole, the dense part included
    res = math2(["build"], env, tmp_path)
    line = next(ln for ln in res.stdout.splitlines() if "search index mathlib" in ln)
    assert "up to date" in line, res.stdout


def test_offline_and_unreachable_say_what_was_skipped(upstream, tmp_path: Path) -> None:
    repo, pinned, _ = upstream
    env = _env(tmp_path, pinned, f"file://{repo}")
    res = math2(["build", "--offline"], env, tmp_path)
    assert res.returncode == 3, res.stderr  # the corpus lacks Mathlib, its main library
    assert "exit 3: the corpus lacks mathlib" in res.stdout.strip().splitlines()[-1]
    line = next(ln for ln in res.stdout.splitlines() if "skipped  mathlib" in ln)
    assert "not fetched (--offline)" in line and pinned[:12] in line
    assert "MATH2_DATA__MATHLIB_DIR" in res.stdout and "MATH2_DATA__MATHLIB_URL" in res.stdout
    assert not (tmp_path / "cache").exists()
    env["MATH2_DATA__MATHLIB_URL"] = f"file://{tmp_path / 'no-such-repo'}"
    res = math2(["build"], env, tmp_path)
    assert res.returncode == 3, res.stderr
    assert "could not fetch mathlib" in res.stdout and "Traceback" not in res.stderr


def _export(db_url: str) -> dict:
    store = open_store(db_url)
    with store.session() as s:
        rows = export_rows(s)
        assert all(r.status == "done" for r in s.scalars(select(Run)))
    store.close()
    return rows


def _build_killed(env: dict[str, str], cwd: Path, when) -> bool:
    """Start `math2 build`, SIGKILL its process group once `when()` is true; True if killed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "math2", "build"],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    while proc.poll() is None:
        if when():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    return False


def test_kill_9_anywhere_then_rerun_converges(upstream, tmp_path: Path, store_url: str) -> None:
    repo, pinned, _ = upstream
    ref_home = tmp_path / "ref"
    ref_home.mkdir()
    ref_env = _env(ref_home, pinned, f"file://{repo}")
    assert math2(["build"], ref_env, ref_home).returncode == 0
    want = _export(ref_env["MATH2_DB_URL"])
    assert any('"name": "Demo.idf_apply"' in r for r in want["mentions"])

    home = tmp_path / "run"
    home.mkdir()
    env = _env(home, pinned, f"file://{repo}", db_url=store_url)
    cache = home / "cache"
    # during the fetch (its half-done folder exists), then at growing delays into the build
    assert _build_killed(env, home, lambda: any(cache.glob("*.partial-*")))
    assert list(cache.glob("*.partial-*"))  # the killed fetch left its half-done folder
    kills = 0
    for delay in (0.8, 1.6, 2.4, 3.2):
        t0 = time.monotonic()
        kills += _build_killed(env, home, lambda d=delay, t=t0: time.monotonic() - t > d)
    assert kills >= 1
    res = math2(["build"], env, home)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not list(cache.glob("*.partial-*"))
    assert _export(store_url) == want
