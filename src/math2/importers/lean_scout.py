"""Reading the lean_scout datasets (zstd parquet shards): mathlib-types, mathlib-const-dep and
mathlib-tactics, in both the older and the newer schemas."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from math2.errors import InputError

_WS = re.compile(r"\s+")

TYPES_REQUIRED = {"name", "type"}
CONST_DEP_REQUIRED = {"name", "deps"}
# Older tactics schema: goals{pp, usedConstants}, ppTac, elaborator, kind.
# Newer: adds module, startPos, endPos, nextStartPos, goalsAfter and richer goals.
TACTICS_REQUIRED = {"goals", "ppTac", "kind"}


@dataclass(slots=True)
class TypeRow:
    """A constant of mathlib-types."""

    name: str
    module: str | None
    type: str
    docstring: str | None
    allow_completion: bool | None  # None: the older schema has no such column

    @property
    def type_hash(self) -> str:
        """sha256 of the pretty-printed type, whitespace collapsed."""
        return type_hash_of(self.type)


def type_hash_of(pretty_type: str) -> str:
    """The type hash of a pretty-printed type (sha256, whitespace collapsed, 32 hex digits): the
    same for the import's datasets and for a binding's check at the pinned build."""
    return hashlib.sha256(_WS.sub(" ", pretty_type).strip().encode()).hexdigest()[:32]


@dataclass(slots=True)
class TacticRow:
    """One tactic invocation (either schema)."""

    module: str | None
    tactic: str
    kind: str
    goals_before: list[str]
    goals_after: list[str] | None  # None in the older schema
    used_constants: list[str]
    line: int | None
    shard: str | None = None  # the parquet file it was read from
    row: int | None = None  # its row in that file (1-based), for errors that name it


def shards(folder: Path) -> list[Path]:
    """The parquet shards of one dataset folder (or a single file)."""
    if folder.is_file():
        return [folder]
    files = sorted(folder.rglob("*.parquet"))
    if not files:
        raise InputError(folder, None, "no .parquet shards")
    return files


def _open(path: Path, required: set[str]) -> pq.ParquetFile:
    try:
        f = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, None, f"not a readable parquet file: {exc}") from exc
    missing = required - set(f.schema_arrow.names)
    if missing:
        raise InputError(
            path, None, f"missing columns {sorted(missing)} (is this the right dataset?)"
        )
    return f


def _batches(path: Path, required: set[str]) -> Iterator[dict[str, list]]:
    f = _open(path, required)
    try:
        for batch in f.iter_batches(batch_size=65536):
            yield batch.to_pydict()
    except (pa.ArrowInvalid, OSError) as exc:  # truncated or corrupt shard
        raise InputError(path, None, f"corrupt parquet data: {exc}") from exc


def read_types(folder: Path) -> Iterator[TypeRow]:
    """Every row of mathlib-types."""
    for shard in shards(folder):
        for cols in _batches(shard, TYPES_REQUIRED):
            n = len(cols["name"])
            doc = cols.get("docString") or cols.get("docstring") or [None] * n
            allow = cols.get("allowCompletion") or [None] * n
            module = cols.get("module") or [None] * n
            for i in range(n):
                yield TypeRow(cols["name"][i], module[i], cols["type"][i], doc[i], allow[i])


def read_const_dep(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """(name, deps) for every row of mathlib-const-dep."""
    for shard in shards(folder):
        for cols in _batches(shard, CONST_DEP_REQUIRED):
            yield from zip(cols["name"], cols["deps"], strict=True)


def read_tactics(folder: Path) -> Iterator[TacticRow]:
    """Every row of mathlib-tactics, in the older or the newer schema."""
    for shard in shards(folder):
        first = 1  # the row number of the batch's first row in this shard
        for cols in _batches(shard, TACTICS_REQUIRED):
            n = len(cols["ppTac"])
            module = cols.get("module") or [None] * n
            after = cols.get("goalsAfter")
            start = cols.get("startPos") or [None] * n
            for i in range(n):
                goals = cols["goals"][i] or []
                yield TacticRow(
                    module=module[i],
                    tactic=cols["ppTac"][i],
                    kind=cols["kind"][i],
                    goals_before=[g["pp"] for g in goals],
                    goals_after=list(after[i]) if after is not None else None,
                    used_constants=sorted(
                        {c for g in goals for c in (g.get("usedConstants") or [])}
                    ),
                    line=start[i]["line"] if start[i] else None,
                    shard=str(shard),
                    row=first + i,
                )
            first += n
