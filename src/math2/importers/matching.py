"""Matching datasets as candidate pairs (K6.7 step 3): TheoremGraph and the Stacks-to-Mathlib
alignment (whose importer, reading Mathlib's own `@[stacks]` attributes, is `stacks.py`). A pair
becomes a crosswalk row with status `candidate`; only the align role, by accepting it, makes it
an edge. No text of the dataset is copied."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from math2.crosswalk.nodes import NodeIndex
from math2.errors import InputError
from math2.importers.common import (
    dir_locator,
    file_digest,
    finish_run,
    import_transaction,
    refuse_empty,
    skip_if_done,
)
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.util.jsonl import read_jsonl
from math2.util.yamlfile import decode_utf8


@dataclass(frozen=True)
class PairSpec:
    """Which fields of a row hold the two sides."""

    node_prefix: str  # node key prefix for the non-Lean side
    other: tuple[str, ...]  # candidate field names for the other side's id
    lean: tuple[str, ...]  # candidate field names for the Lean declaration
    score: tuple[str, ...] = ("score", "confidence", "similarity")


SPECS = {
    "stacks-mathlib": PairSpec(
        "stacks", ("tag", "stacks_tag", "stacks"), ("decl", "declaration", "lean", "mathlib")
    ),
    "theoremgraph": PairSpec(
        "arxiv",
        ("statement_id", "arxiv_statement", "arxiv_id", "paper"),
        ("lean_decl", "decl", "declaration", "lean"),
    ),
}


def _pick(row: dict, names: tuple[str, ...]) -> str | None:
    for n in names:
        if row.get(n) not in (None, ""):
            return str(row[n])
    return None


def read_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(line or row number, row) from .jsonl, .csv/.tsv or .parquet files under `path`."""
    files = (
        [path]
        if path.is_file()
        else sorted(
            p for p in path.rglob("*") if p.suffix in (".jsonl", ".csv", ".tsv", ".parquet")
        )
    )
    if not files:
        raise InputError(path, None, "no .jsonl, .csv, .tsv or .parquet files")
    for f in files:
        if f.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            try:  # a batch at a time: a dataset of 580,000 rows is not held as dicts at once
                batches = pq.ParquetFile(f).iter_batches(batch_size=10_000)
                i = 0
                for batch in batches:
                    for row in batch.to_pylist():
                        i += 1
                        yield i, {**row, "__file": str(f)}
            except (pa.ArrowInvalid, OSError) as exc:
                raise InputError(f, None, f"not a readable parquet file: {exc}") from exc
            continue
        if f.suffix == ".jsonl":  # objects only, the text limit applied, file:line errors
            for i, obj in read_jsonl(f):
                yield i, {**obj, "__file": str(f)}
        else:
            text = decode_utf8(f.read_bytes(), f)
            reader = csv.DictReader(
                text.splitlines(), delimiter="\t" if f.suffix == ".tsv" else ","
            )
            for i, row in enumerate(reader, 2):
                yield i, {**row, "__file": str(f)}


def import_pairs(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """Every pair as a candidate crosswalk row; rows missing a side are errors with their line."""
    spec = SPECS[entry.name]
    digest = file_digest(path)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    from math2.importers.theoremgraph import is_release, theoremgraph_rows

    pairs = []
    release = entry.name == "theoremgraph" and is_release(path)  # the relational tables
    for line, row in theoremgraph_rows(path) if release else read_rows(path):
        other, lean = _pick(row, spec.other), _pick(row, spec.lean)
        if other is None or lean is None:
            raise InputError(
                row["__file"], line, f"a pair needs one of {spec.other} and one of {spec.lean}"
            )
        score, judge = _pick(row, spec.score), row.get("judge")
        extra = {"score": float(score)} if score is not None else {}
        pairs.append((other, lean, extra | ({"dataset_judge": judge} if judge else {})))
    return write_pairs(store, entry, path, digest, pairs)


Pair = tuple[str, str, dict[str, Any]]  # (the other side's id, the Lean declaration, extra)


def write_pairs(
    store: Store,
    entry: SourceEntry,
    path: Path,
    digest: str,
    pairs: list[Pair],
    **params: Any,
) -> ImportResult:
    """Each pair as a candidate crosswalk row of a node `PREFIX:ID`, in one transaction."""
    spec = SPECS[entry.name]
    refuse_empty(path, len(pairs), "pairs", entry.name)
    with import_transaction(store, entry, path, digest, **params) as (s, src, pin, run):
        index = NodeIndex(s)
        for other, lean, extra in pairs:
            node = index.node(f"{spec.node_prefix}:{other}", selected_by=entry.name)
            index.edge(
                node,
                "lean4",
                lean,
                src.id,
                pin.id,
                status="candidate",
                extra=extra,
            )
        counts = {
            "pairs": len(pairs),
            "candidate rows": index.created_edges,
            "nodes created": index.created_nodes,
        }
        finish_run(run, counts)
    return ImportResult(source=entry.name, pin=pin.key, path=str(path), counts=counts)


register(
    ImporterSpec("theoremgraph", dir_locator("theoremgraph_dir", "TheoremGraph data"), import_pairs)
)
