"""`math2 build` with the other systems: each git source with an importer fetched at its pin from
a local git server (a `git daemon` this test starts, and file://), never the internet; a local
copy used where one is configured; `--offline` fetches nothing; the line of each source says
which it did; the report gives mentions, nodes and crosswalks per system."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from math2.config import load_settings
from math2.importers.registry import load_builtin_importers
from math2.importers.supply import supply
from math2.sources import load_manifest
from tests.build_helpers import math2, pinned_manifest, user_env
from tests.conftest import FIXTURES

GIT = ["-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> str:
    res = subprocess.run(
        ["git", "-C", str(repo), *GIT, *args], capture_output=True, text=True, check=True
    )
    return res.stdout.strip()


def _upstream(base: Path, name: str, fixture: str) -> tuple[Path, str]:
    """A repository holding a fixture, its pinned commit below a later one."""
    repo = base / name
    shutil.copytree(FIXTURES / "systems" / fixture, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "the pinned commit")
    pinned = _git(repo, "rev-parse", "HEAD")
    (repo / "later.ml").write_text("let LATER = prove(`T`, REWRITE_TAC[]);;\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "a later commit")
    return repo, pinned


def _manifest(folder: Path, pins: dict[str, str]) -> Path:
    return pinned_manifest(folder, pins, keep=tuple(pins))


@pytest.fixture
def git_daemon(tmp_path: Path):
    """`git daemon` serving a folder on a free local port: yields (folder, base URL)."""
    served = tmp_path / "served"
    served.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1",
         f"--port={port}", f"--base-path={served}", str(served)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):  # until it accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield served, f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_build_fetches_each_source_at_its_pin(git_daemon, tmp_path: Path) -> None:
    served, base_url = git_daemon
    hol, hol_pin = _upstream(served, "hol-light", "hol-light")
    # upload-pack must allow a fetch of the pinned commit by its id (not a branch tip)
    _git(hol, "config", "uploadpack.allowAnySHA1InWant", "true")
    rocq, rocq_pin = _upstream(tmp_path / "up", "stdlib", "rocq")
    naproche = tmp_path / "naproche-local"
    shutil.copytree(FIXTURES / "systems" / "naproche", naproche)
    home = tmp_path / "home"
    home.mkdir()
    manifest = _manifest(home, {"hol-light": hol_pin, "rocq-stdlib": rocq_pin, "naproche": "x"})
    env = user_env(
        home,
        MATH2_MANIFEST=str(manifest),
        MATH2_DATA__URLS=(
            f'{{"hol-light": "{base_url}/hol-light", "rocq-stdlib": "file://{rocq}"}}'
        ),
        MATH2_DATA__NAPROCHE_DIR=str(naproche),
    )
    res = math2(["build"], env, home)
    assert res.returncode == 0, res.stdout + res.stderr
    out = " ".join(res.stdout.split())  # lines the terminal width wrapped, joined
    assert f"imported hol-light fetched at pin {hol_pin[:12]} from {base_url}/hol-light" in out
    assert f"imported rocq-stdlib fetched at pin {rocq_pin[:12]} from file://{rocq}" in out
    assert f"imported naproche from {naproche} (a local copy: MATH2_DATA__NAPROCHE_DIR)" in out
    # the same progress lines as Mathlib's fetch
    assert f"fetching hol-light at {hol_pin[:12]}" in res.stderr and "verified" in res.stderr
    assert "import hol-light: done in " in res.stderr
    cached = home / "cache" / f"hol-light-{hol_pin}"
    assert not (cached / "later.ml").exists()  # the pin, not the branch tip
    # the report: mentions, nodes and crosswalks per system
    table = res.stdout[res.stdout.index("corpus report: per system") :]
    row = next(ln for ln in table.splitlines() if "│ hol-light" in ln)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[:4] == ["hol-light", "hol-light", "19", "0"]  # system, source, mentions, nodes
    # a second build uses what the first fetched, and says so
    again = math2(["build"], env, home)
    assert again.returncode == 0, again.stderr
    out = " ".join(again.stdout.split())  # lines the terminal width wrapped, joined
    assert f"imported hol-light already imported at this pin (from {cached} (fetched at pin" in out
    assert "by an earlier build" in out and "fetching hol-light" not in again.stderr


def test_offline_fetches_nothing_and_says_how_to_supply(tmp_path: Path) -> None:
    rocq, pin = _upstream(tmp_path / "up", "stdlib", "rocq")
    home = tmp_path / "home"
    home.mkdir()
    manifest = _manifest(home, {"rocq-stdlib": pin})
    env = user_env(
        home, MATH2_MANIFEST=str(manifest), MATH2_DATA__URLS=f'{{"rocq-stdlib": "file://{rocq}"}}'
    )
    res = math2(["build", "--offline"], env, home)
    assert res.returncode == 0, res.stderr
    out = " ".join(res.stdout.split())
    assert f"skipped rocq-stdlib not fetched (--offline): rocq-stdlib at {pin[:12]}" in out
    assert "MATH2_DATA__ROCQ_STDLIB_DIR" in out and "MATH2_DATA__URLS" in out
    assert not (home / "cache").exists()
    # a server that lacks the pinned commit: a skip with the reason, no traceback
    manifest = _manifest(home, {"rocq-stdlib": "0" * 40})
    env["MATH2_MANIFEST"] = str(manifest)
    res = math2(["build"], env, home)
    assert res.returncode == 0 and "Traceback" not in res.stderr
    assert "could not fetch rocq-stdlib at 000000000000" in " ".join(res.stdout.split())


def test_hf_dataset_at_its_revision(tmp_path: Path, monkeypatch) -> None:
    """The `hf` route through `datasets` (a stand-in `load_dataset`: no network here), saved as
    parquet named by the revision; offline, nothing is fetched."""
    import datasets

    entry = load_manifest(pinned_manifest(tmp_path, {"herald": "a" * 40})).get("herald")
    spec = load_builtin_importers()["herald"]
    asked = []

    def load_dataset(repo, revision, split, cache_dir):
        asked.append((repo, revision, split))
        return datasets.Dataset.from_dict(
            {"id": [1], "informal_statement": ["x"], "formal_statement": ["theorem a : True"]}
        )

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    settings = load_settings(data={"cache_dir": str(tmp_path / "cache")})
    got = supply(settings, entry, spec, offline=True, say=print)
    assert got.path is None and "not fetched (--offline)" in got.how and asked == []
    got = supply(settings, entry, spec, offline=False, say=print)
    assert asked == [("FrenzyMath/Herald_statements", "a" * 40, "train")]
    assert got.path == tmp_path / "cache" / f"herald-{'a' * 40}.parquet" and got.path.is_file()
    assert "fetched FrenzyMath/Herald_statements at revision aaaaaaaaaaaa" in got.how
    again = supply(settings, entry, spec, offline=True, say=print)
    assert again.path == got.path and "earlier" in again.how
