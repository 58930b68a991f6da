"""Where an external data set is on this machine, hash-checked: the folder `MATH2_DATA__DIR`
names, else math2's data cache (`data.cache_dir`/data, where `math2 data fetch` puts it).

Both have one layout (`data/external.yaml`'s `folder` of each set). A set is there when every
file it lists is, each with the SHA-256 the manifest lists; a file whose hash differs is refused
with the file and both hashes; a set that is nowhere is one line naming the setting and the
fetch command.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel

from math2.config import Settings
from math2.data.manifest import DataSet, load_external
from math2.errors import InputError, Math2Error

STAMPS = ".fetched"  # in the cache: one JSON per fetched set (commit, from where, when)


class DataMissing(Math2Error):
    """A data set that is neither in `MATH2_DATA__DIR` nor in the data cache (or lacks a file)."""


class DataMismatch(InputError):
    """A file of a data set whose SHA-256 is not the one the manifest lists."""


class Origin(StrEnum):
    """Where a set was found."""

    DIR = "MATH2_DATA__DIR"
    CACHE = "data cache"
    NONE = "nowhere"


def cache_root(settings: Settings) -> Path:
    """math2's data cache: the same layout as a `MATH2_DATA__DIR` folder."""
    return Path(settings.data.cache_dir) / "data"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def how_to_get(ds: DataSet) -> str:
    """The two ways to have a set, for messages."""
    return (
        f"run `math2 data fetch {ds.name}`, or set MATH2_DATA__DIR to a folder holding "
        f"{ds.folder}/ (data/README.md)"
    )


def verify(root: Path, ds: DataSet) -> Path:
    """`root`/`ds.folder` when every file of `ds` is there with its SHA-256; DataMissing naming
    the first missing file, DataMismatch naming the first file that differs."""
    return verify_folder(root / ds.folder, ds)


def verify_folder(folder: Path, ds: DataSet) -> Path:
    """`folder` when it holds every file of `ds` with its SHA-256 (see `verify`)."""
    missing = [f for f in ds.files if not (folder / f.path).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more of its {len(ds.files)} files)" if missing[1:] else ""
        raise DataMissing(
            f"data set {ds.name} is incomplete: {folder / missing[0].path} is missing{more}; "
            + how_to_get(ds)
        )
    for f in ds.files:
        got = sha256(folder / f.path)
        if got != f.sha256 and got not in f.earlier:
            raise DataMismatch(
                folder / f.path,
                None,
                f"refused: its SHA-256 is {got}, data/external.yaml lists {f.sha256} for "
                f"{ds.name} ({ds.where}); fetch it again (`math2 data fetch {ds.name}`) or "
                "put the file at the pin there",
            )
    return folder


def _given(settings: Settings, ds: DataSet) -> Path | None:
    """The set's folder in `MATH2_DATA__DIR`, when that folder names one that exists."""
    if settings.data.dir is None:
        return None
    folder = Path(settings.data.dir) / ds.folder
    return folder if folder.is_dir() else None


def _fetched(settings: Settings, ds: DataSet) -> Path | None:
    """The set's folder in the data cache, when a fetch of the manifest's pin finished there."""
    stamp = read_stamp(settings, ds)
    if stamp is None or stamp.get("commit") != ds.commit:
        return None
    folder = cache_root(settings) / ds.folder
    return folder if folder.is_dir() else None


def read_stamp(settings: Settings, ds: DataSet) -> dict[str, str] | None:
    path = cache_root(settings) / STAMPS / f"{ds.name}.json"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def locate(settings: Settings, name: str) -> Path:
    """The folder of data set `name`, every file hash-checked: from `MATH2_DATA__DIR` when it
    holds the set's folder, else from the data cache; DataMissing (how to get it) otherwise."""
    ds = load_external(settings.data.external).get(name)
    root = _root(settings, ds)
    if root is not None:
        return verify(root[1], ds)
    given = f"={settings.data.dir} (no {ds.folder}/)" if settings.data.dir else " (unset)"
    if settings.data.dir and not Path(settings.data.dir).is_dir():  # a mistyped folder, named
        given = f"={settings.data.dir}, which does not exist (fix the path)"
    raise DataMissing(
        f"data set {ds.name} ({ds.where}) is not here: not in MATH2_DATA__DIR{given}, not in "
        f"the data cache {cache_root(settings)}; {how_to_get(ds)}"
    )


def _root(settings: Settings, ds: DataSet) -> tuple[Origin, Path] | None:
    """Where the set is looked for: the given folder when it holds the set, else the cache
    when a fetch of the pin finished there."""
    if _given(settings, ds) is not None:
        return Origin.DIR, Path(settings.data.dir or ".")
    if _fetched(settings, ds) is not None:
        return Origin.CACHE, cache_root(settings)
    return None


class SetStatus(BaseModel):
    """One set on this machine: where it was found, whether it checks, why not."""

    name: str
    title: str
    repository: str
    commit: str
    licence: str
    files: int
    origin: Origin
    folder: Path | None = None
    ok: bool = False
    fetched_from: str | None = None  # the URL a cached set was fetched from
    problem: str | None = None
    note: str | None = None  # a file as an earlier version of math2's script made it


def status(settings: Settings) -> list[SetStatus]:
    """Every set of the manifest: present (and hash-checked) or not, from where, at which pin."""
    out = []
    for ds in load_external(settings.data.external).sets:
        base = {
            "name": ds.name,
            "title": ds.title,
            "repository": ds.repository,
            "commit": ds.commit,
            "licence": ds.licence,
            "files": len(ds.files),
        }
        found = _root(settings, ds)
        if found is None:
            out.append(SetStatus(**base, origin=Origin.NONE, problem=how_to_get(ds)))
            continue
        origin, root = found
        folder = root / ds.folder
        came = (read_stamp(settings, ds) or {}).get("from") if origin is Origin.CACHE else None
        try:
            verify(root, ds)
        except (DataMissing, DataMismatch) as exc:
            out.append(
                SetStatus(**base, origin=origin, folder=folder, fetched_from=came, problem=str(exc))
            )
            continue
        earlier = [
            f"{f.path}: an earlier making ({why}); `math2 data fetch {ds.name}` makes today's"
            for f in ds.files
            if (why := f.made(sha256(folder / f.path)))
        ]
        out.append(
            SetStatus(
                **base,
                origin=origin,
                folder=folder,
                fetched_from=came,
                ok=True,
                note="; ".join(earlier) or None,
            )
        )
    return out
