"""The manifest of external data (`data/external.yaml`): each set's origin, pin, licence, place
in the data folder's layout, and the SHA-256 of every file."""

from __future__ import annotations

import functools
import re
from enum import StrEnum
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from math2.errors import InputError

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")


class FetchMethod(StrEnum):
    """How a set is had at its pin."""

    GIT = "git"  # a shallow, sparse fetch of exactly the commit; the files copied out of it
    MINE = "mine"  # the history up to the commit, mined by math2's own script (`made_by`)


class DataFile(BaseModel):
    """One file of a set: its path in the set's folder, its path in the repository at the
    commit (`source`; None for a file math2 derives), its SHA-256."""

    path: str
    source: str | None
    sha256: str
    # A derived file (`source` None) as an earlier version of math2's script made it from the
    # same pin: SHA-256 → what differs. Accepted, and said (`math2 data status`), so a folder
    # made before the script changed (CI's copy) still reads; a fetch makes `sha256`.
    earlier: dict[str, str] = Field(default_factory=dict)

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str) -> str:
        if not _SHA256.fullmatch(v):
            raise ValueError(f"not a SHA-256 (64 lowercase hex digits): {v!r}")
        return v

    @model_validator(mode="after")
    def _earlier_of_derived(self) -> DataFile:
        if self.earlier and self.source is not None:
            raise ValueError(f"{self.path}: only a file math2 derives has earlier makings")
        for h in self.earlier:
            self._hex(h)
        return self

    def made(self, got: str) -> str | None:
        """What an accepted hash says: None for the current making, else how it differs."""
        return None if got == self.sha256 else self.earlier.get(got, "")

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        if v.startswith("/") or ".." in Path(v).parts:
            raise ValueError(f"a file's path must stay inside its set's folder: {v!r}")
        return v


class DataSet(BaseModel):
    """One external data set at its pin."""

    name: str
    title: str
    repository: str
    commit: str
    licence: str
    folder: str  # where the set lies in a data folder (`MATH2_DATA__DIR`, the data cache)
    fetch: FetchMethod
    files: list[DataFile]
    checkout_of: str | None = None  # a source whose checkout at `commit` holds the files
    made_by: str | None = None  # the script that mines a `mine` set, from the repository root

    @field_validator("commit")
    @classmethod
    def _full(cls, v: str) -> str:
        if not _COMMIT.fullmatch(v):
            raise ValueError(f"the pin must be a full 40-hex commit: {v!r}")
        return v

    @model_validator(mode="after")
    def _whole(self) -> DataSet:
        if not self.files:
            raise ValueError(f"data set {self.name} lists no file")
        if self.fetch is FetchMethod.MINE and not self.made_by:
            raise ValueError(f"data set {self.name} is mined but names no script (made_by)")
        if self.fetch is FetchMethod.GIT and any(f.source is None for f in self.files):
            raise ValueError(f"data set {self.name}: every fetched file needs its path")
        return self

    @property
    def where(self) -> str:
        """`owner/name@commit12`, for messages."""
        repo = self.repository.removesuffix(".git").removeprefix("https://github.com/")
        return f"{repo} at {self.commit[:12]}"


class ExternalData(BaseModel):
    """Every external data set math2 reads."""

    path: Path
    sets: list[DataSet] = Field(default_factory=list)

    def names(self) -> list[str]:
        return [s.name for s in self.sets]

    def get(self, name: str) -> DataSet:
        for s in self.sets:
            if s.name == name:
                return s
        raise UnknownDataSet(
            self.path, None, f"no data set named {name!r}; the sets: {', '.join(self.names())}"
        )


class UnknownDataSet(InputError):
    """A data set name the manifest does not list."""


def manifest_path() -> Path:
    """`data/external.yaml` of the checkout math2 runs from (`math2/_data/` in a wheel)."""
    packaged = Path(__file__).resolve().parents[1] / "_data" / "external.yaml"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[3] / "data" / "external.yaml"


def _files(raw: object) -> list[dict[str, object]]:
    """`path: sha256` or `path: {sha256: …, from: …, earlier: {sha256: what differs}}` →
    DataFile fields (the source path is the layout path when `from` is not given)."""
    if not isinstance(raw, dict):
        raise ValueError("files must be a mapping of path to SHA-256")
    out = []
    for path, v in raw.items():
        if isinstance(v, dict):
            f = {"path": path, "sha256": v.get("sha256"), "source": v.get("from", path)}
            out.append({**f, "earlier": v["earlier"]} if "earlier" in v else f)
        else:
            out.append({"path": path, "sha256": v, "source": path})
    return out


def load_external(path: Path | None = None) -> ExternalData:
    """The manifest of external data (read again only when the file changed)."""
    path = Path(path or manifest_path())
    try:
        st = path.stat()
    except OSError as exc:
        raise InputError(path, None, f"cannot read the external-data manifest: {exc}") from exc
    return _load(path.resolve(), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: Path, _mtime_ns: int, _size: int) -> ExternalData:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    except OSError as exc:
        raise InputError(path, None, f"cannot read the external-data manifest: {exc}") from exc
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise InputError(path, None if line is None else line + 1, str(exc)) from exc
    sets = []
    for i, item in enumerate((raw or {}).get("sets") or []):
        try:
            item = dict(item)
            mined = item.get("fetch") == FetchMethod.MINE
            files = _files(item.pop("files", None))
            if mined:  # a mined file has no path in the repository
                files = [{**f, "source": None} for f in files]
            sets.append(DataSet(**item, files=files))
        except (TypeError, ValueError, ValidationError) as exc:
            name = item.get("name", f"#{i + 1}") if isinstance(item, dict) else f"#{i + 1}"
            raise InputError(path, None, f"data set {name}: {exc}") from exc
    names = [s.name for s in sets]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise InputError(path, None, f"data sets named twice: {', '.join(dup)}")
    return ExternalData(path=path, sets=sets)
