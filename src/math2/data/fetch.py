"""`math2 data fetch`: an external data set at its pin into math2's data cache, hash-checked.

A `git` set: its files out of a shallow, sparse fetch of exactly the pinned commit (or out of a
checkout of the same commit this machine has: Mathlib's docs lists from a Mathlib checkout). A
`mine` set: the repository's history up to the commit, mined by math2's own script (checks-dev,
`benchmarks/mine_checks_dev.py`). Either way every file must have the SHA-256 the manifest lists
before the set takes its place in the cache (a folder renamed into place, then a stamp saying
from where and at which commit), so a fetch killed at any point leaves the set whole or absent.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from math2.config import Settings
from math2.data.git import FetchError, cached_checkout, fetch_pinned, head_commit
from math2.data.manifest import DataSet, FetchMethod, load_external
from math2.data.sets import (
    STAMPS,
    DataMismatch,
    DataMissing,
    cache_root,
    read_stamp,
    sha256,
    verify_folder,
)
from math2.util.progress import stage, track

_PARTIAL = ".partial-"


def repository_root() -> Path | None:
    """The math2 checkout this code runs from (None in an installed wheel): where the scripts
    that mine a set live."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "benchmarks").is_dir() and (root / "pyproject.toml").is_file() else None


def _local_checkout(settings: Settings, ds: DataSet) -> Path | None:
    """A checkout of `ds.checkout_of` at the set's commit on this machine, if any."""
    if ds.checkout_of is None:
        return None
    given = getattr(settings.data, f"{ds.checkout_of.replace('-', '_')}_dir", None)
    if given is not None and head_commit(Path(given)) == ds.commit:
        return Path(given)
    return cached_checkout(Path(settings.data.cache_dir), ds.checkout_of, ds.commit)


def _copy_files(ds: DataSet, checkout: Path, work: Path, origin: str) -> None:
    """The set's files out of a checkout at its commit, each checked as it is copied."""
    for f in track(ds.files, f"check {ds.name}", unit="files", batch=100):
        assert f.source is not None
        src = checkout / f.source
        if not src.is_file():
            raise DataMissing(
                f"data set {ds.name}: {f.source} is not in {origin} at {ds.commit[:12]}"
            )
        dst = work / f.path
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        if (got := sha256(dst)) != f.sha256:
            raise DataMismatch(
                f"{origin} at {ds.commit[:12]}: {f.source}",
                None,
                f"refused: its SHA-256 is {got}, data/external.yaml lists {f.sha256} for {ds.name}",
            )


def _mine(ds: DataSet, repo: Path, work: Path, say: Callable[[str], None]) -> None:
    """Run the set's mining script over the repository's history into `work`."""
    root = repository_root()
    script = root / ds.made_by if root is not None and ds.made_by else None
    if script is None or not script.is_file():
        raise DataMissing(
            f"data set {ds.name} is mined by {ds.made_by}, which is part of a math2 checkout, "
            f"not of this installation: mine it there, or set MATH2_DATA__DIR to a folder "
            f"holding {ds.folder}/"
        )
    out = work / ds.files[0].path
    out.parent.mkdir(parents=True, exist_ok=True)
    with stage(f"mine {ds.name} ({ds.made_by})"):
        res = subprocess.run(
            [sys.executable, str(script), str(repo / ".git"), str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
    if res.returncode != 0:
        tail = " / ".join(res.stderr.strip().splitlines()[-2:])
        raise FetchError(f"{ds.made_by} failed (exit {res.returncode}): {tail}")
    if res.stderr.strip():
        say(f"{ds.name}: {res.stderr.strip().splitlines()[-1]}")


def fetch_set(
    settings: Settings,
    name: str,
    progress: Callable[[str], None] | None = None,
    url: str | None = None,
) -> Path:
    """Data set `name` at its pin in the data cache, every file hash-checked (a set already
    there and whole is not fetched again). `url` (or `data.set_urls`) fetches it from another
    repository than the manifest's, a mirror."""
    say = progress or (lambda _m: None)
    ds = load_external(settings.data.external).get(name)
    root = cache_root(settings)
    dest = root / ds.folder
    stamp = read_stamp(settings, ds)
    if stamp is not None and stamp.get("commit") == ds.commit and dest.is_dir():
        try:
            return verify_folder(dest, ds)
        except (DataMissing, DataMismatch) as exc:
            say(f"{ds.name} in the data cache does not check ({exc}); fetching it again")
    source = url or settings.data.set_urls.get(name) or ds.repository
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{dest.name}{_PARTIAL}*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = dest.parent / f".{dest.name}{_PARTIAL}{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    cache = Path(settings.data.cache_dir)
    fetched: Path | None = None
    try:
        local = None if url or name in settings.data.set_urls else _local_checkout(settings, ds)
        if ds.fetch is FetchMethod.GIT and local is not None:
            say(f"{ds.name}: from the {ds.checkout_of} checkout at {ds.commit[:12]} ({local})")
            _copy_files(ds, local, work, str(local))
            source = str(local)
        elif ds.fetch is FetchMethod.GIT:
            sparse = [f.source for f in ds.files if f.source is not None]
            fetched = fetch_pinned(source, ds.commit, cache, f"data-{name}", say, sparse=sparse)
            _copy_files(ds, fetched, work, source)
        else:
            fetched = fetch_pinned(source, ds.commit, cache, f"data-{name}", say, depth=None)
            _mine(ds, fetched, work, say)
            verify_folder(work, ds)
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        if fetched is not None:  # the files are out of it: the checkout is not kept
            shutil.rmtree(fetched, ignore_errors=True)
    stamps = root / STAMPS
    stamps.mkdir(parents=True, exist_ok=True)
    record = {
        "name": ds.name,
        "commit": ds.commit,
        "from": source,
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    tmp = stamps / f".{ds.name}.json{_PARTIAL}{os.getpid()}"
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(stamps / f"{ds.name}.json")
    say(f"{ds.name} at {ds.commit[:12]}: {len(ds.files)} files verified in {dest}")
    return dest
