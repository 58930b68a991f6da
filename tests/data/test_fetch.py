"""`math2 data fetch`: a set at its pin into the data cache over git (here always a local
repository over file://, never the internet): a shallow, sparse fetch of exactly the pinned
commit, every file hash-checked before the set takes its place; a set mined from a repository's
history (checks-dev) is mined by math2's own script; a fetch that fails or is refused leaves
nothing; git's progress shows as the stages Mathlib's fetch shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from math2.config import load_settings
from math2.data import DataMismatch, FetchError, fetch_set, locate
from math2.util.progress import LineReporter, reporting
from tests.build_helpers import math2, user_env
from tests.data.helpers import PAGES, commit, manifest, pages_set, sha
from tests.data.test_miner import HISTORY, mine_direct


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> tuple[Path, str]:
    """A repository holding the pages (and a file the set does not list) at the pinned commit,
    with a later commit that changes a page."""
    repo = tmp_path_factory.mktemp("upstream") / "lists"
    pin = commit(repo, {**PAGES, "other/big.txt": "x" * 100_000}, "the pinned commit")
    commit(repo, {"lists/one.md": "changed later\n"}, "a later commit")
    return repo, pin


def _settings(tmp_path: Path, sets: list[dict], **data):
    m = manifest(tmp_path / "external.yaml", sets)
    return load_settings(data={"external": m, "cache_dir": tmp_path / "cache", **data})


def test_fetch_the_pin_check_every_file_and_reuse(upstream, tmp_path: Path) -> None:
    repo, pin = upstream
    settings = _settings(tmp_path, [pages_set(f"file://{repo}", pin)])
    said: list[str] = []
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=3600)):
        folder = fetch_set(settings, "pages", said.append)
    assert folder == tmp_path / "cache" / "data" / "thm" / "pages"
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "one.md": PAGES["lists/one.md"],  # the pin's, not the later commit's
        "two.md": PAGES["lists/two.md"],
    }
    assert locate(settings, "pages") == folder
    # the same progress as Mathlib's fetch: each phase of git's a stage, then the check
    assert any(t.startswith("git fetch: ") and " in " in t for t in lines), lines
    assert any(t.startswith("check pages: 2/2 files (100%) in ") for t in lines), lines
    assert any(f"fetching data-pages at {pin[:12]}" in s for s in said), said
    assert any("2 files verified" in s for s in said), said
    # the checkout is not kept, only the set; a second fetch reads the cache
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["data"]
    stamp = json.loads((tmp_path / "cache" / "data" / ".fetched" / "pages.json").read_text())
    assert stamp["commit"] == pin and stamp["from"] == f"file://{repo}"
    again = _settings(tmp_path, [pages_set("file:///nowhere/at/all", pin)])
    assert fetch_set(again, "pages") == folder


def test_a_fetched_file_that_differs_is_refused_and_nothing_is_kept(
    upstream, tmp_path: Path
) -> None:
    repo, pin = upstream
    ds = pages_set(f"file://{repo}", pin)
    ds["files"]["two.md"]["sha256"] = "0" * 64
    settings = _settings(tmp_path, [ds])
    with pytest.raises(DataMismatch) as info:
        fetch_set(settings, "pages")
    assert "lists/two.md" in str(info.value) and "0" * 64 in str(info.value)
    assert sha(PAGES["lists/two.md"]) in str(info.value)
    data = tmp_path / "cache" / "data"
    assert not (data / "thm" / "pages").exists() and not list(data.rglob("*.partial-*"))


def test_a_commit_the_server_lacks_leaves_nothing(upstream, tmp_path: Path) -> None:
    repo, _ = upstream
    settings = _settings(tmp_path, [pages_set(f"file://{repo}", "0" * 40)])
    with pytest.raises(FetchError, match="git fetch failed"):
        fetch_set(settings, "pages")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_a_set_mined_from_the_history(tmp_path: Path) -> None:
    """checks-dev's way: the whole history up to the pin, mined by benchmarks/mine_checks_dev.py
    into the cache, where its output must have the manifest's hash."""
    repo, pin = HISTORY(tmp_path / "fc")
    expected = mine_direct(repo, tmp_path / "direct.jsonl")
    ds = {
        "name": "dev",
        "title": "pairs mined for the tests",
        "repository": f"file://{repo}",
        "commit": pin,
        "licence": "Apache-2.0",
        "folder": "checks-dev",
        "fetch": "mine",
        "made_by": "benchmarks/mine_checks_dev.py",
        "files": {"pairs.jsonl": sha(expected)},
    }
    settings = _settings(tmp_path, [ds])
    folder = fetch_set(settings, "dev")
    assert (folder / "pairs.jsonl").read_bytes() == expected
    ds["files"]["pairs.jsonl"] = "1" * 64  # the miner's output is not what the manifest pins
    (tmp_path / "cache" / "data" / ".fetched" / "dev.json").unlink()
    settings = _settings(tmp_path, [ds])
    with pytest.raises(DataMismatch, match="1111"):
        fetch_set(settings, "dev")


def test_the_cli_fetches_from_a_mirror_and_a_failure_is_one_line(upstream, tmp_path: Path) -> None:
    repo, pin = upstream
    m = manifest(tmp_path / "external.yaml", [pages_set("file:///no/such/repo", pin)])
    env = user_env(tmp_path, MATH2_DATA__EXTERNAL=str(m))
    res = math2(["data", "fetch"], env, tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "pages: could not be had" in err[0] and "MATH2_DATA__DIR" in err[0]
    res = math2(["data", "fetch", "pages", "--from", f"file://{repo}"], env, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "check pages: 2/2 files (100%)" in res.stderr
    res = math2(["data", "status"], env, tmp_path)
    assert res.returncode == 0 and f"fetched from file://{repo}" in " ".join(res.stdout.split())
    res = math2(["data", "fetch", "nope"], env, tmp_path)
    assert res.returncode == 2 and "no data set named 'nope'" in res.stderr
