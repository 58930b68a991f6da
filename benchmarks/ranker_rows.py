"""Issue 45 §3: the first stage's candidates, feature rows and labels of every dev-set query over
one index, as the math2 on PYTHONPATH computes them (`ranker.query_rows`), kept in a file that
records that math2's feature names and RANKER_VERSION beside the rows.

    PYTHONPATH=/work/main/src python benchmarks/ranker_rows.py \\
        --index STORE/.math2/index/mathlib --out rows_main.pkl [--sets benchmarks/devsets]

`retrieval_ranker.py` reads such a file: `--cache` only where its feature list is this math2's
(`FEATURES`, in order), `--baseline-rows` only where it is a prefix of it (an older math2 whose
features this one appends to: the mix reads the first columns by name), each trained under the
names the file records (`ranker.fit`'s `features`). Any other file — one of another feature
list, one made before the names were recorded, one of other dev-set queries — is refused with
one line naming it (`RowsFileError`). The file is a pickle: read only files you made.

The script imports only what every math2 since RANKER_VERSION 2 has (`SearchIndex`,
`read_devsets`, `query_rows`, `FEATURES`, `RANKER_VERSION`), so that another checkout's `src`
on PYTHONPATH makes that checkout's rows; the sets default to this repository's.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from math2.retrieval.devsets import read_devsets
from math2.retrieval.features import FEATURES
from math2.retrieval.index import SearchIndex
from math2.retrieval.ranker import RANKER_VERSION, QueryRows, query_rows

ROWS_FORMAT = 1  # the layout of the pickled dict below
SETS = Path(__file__).resolve().parent / "devsets"


class RowsFileError(Exception):
    """A rows file this math2 cannot score as what it says it is."""


@dataclass(frozen=True)
class RowsFile:
    """Rows as one math2 made them: its RANKER_VERSION and feature names, and the rows."""

    path: Path
    version: int
    features: tuple[str, ...]
    rows: list[QueryRows]


def save_rows(
    path: Path,
    rows: Sequence[QueryRows],
    features: Sequence[str] = FEATURES,
    version: int = RANKER_VERSION,
) -> None:
    payload = {"format": ROWS_FORMAT, "version": version, "features": list(features),
               "rows": list(rows)}  # fmt: skip
    path.write_bytes(pickle.dumps(payload))


def load_rows(
    path: Path, queries: Sequence[str], features: Sequence[str] = FEATURES, prefix: bool = False
) -> RowsFile:
    """The rows at `path`, refused unless they are of `queries`, in order, and their feature
    names are `features` (or, with `prefix`, the first of them)."""
    try:
        payload = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise RowsFileError(f"{path}: unreadable ({exc})") from None
    remake = f"make them again with `python benchmarks/ranker_rows.py --out {path}`"
    if not isinstance(payload, dict) or payload.get("format") != ROWS_FORMAT:
        raise RowsFileError(f"{path}: rows without the feature names they were made with "
                            f"(made before ranker_rows.py recorded them): {remake} under the "
                            "math2 they stand for")  # fmt: skip
    names, want = tuple(payload["features"]), tuple(features)
    fits = names == want[: len(names)] if prefix else names == want
    if not fits:
        other = sorted(set(names) ^ set(want)) or ["the same names in another order"]
        raise RowsFileError(f"{path}: rows of RANKER_VERSION {payload['version']} with "
                            f"{len(names)} features are not {'a prefix of ' if prefix else ''}"
                            f"this math2's {len(want)} (version {RANKER_VERSION}; differing: "
                            f"{', '.join(other)}): {remake}")  # fmt: skip
    rows: list[QueryRows] = payload["rows"]
    width = {d.rows.shape[1] for d in rows if d.rows.ndim == 2 and len(d.rows)}
    if width - {len(names)}:
        raise RowsFileError(f"{path}: rows of width {sorted(width)} under {len(names)} "
                            f"recorded features: {remake}")  # fmt: skip
    if [d.item.query for d in rows] != list(queries):
        raise RowsFileError(f"{path}: rows of other dev-set queries ({len(rows)} rows, "
                            f"{len(queries)} queries here: another index or --sets)")  # fmt: skip
    return RowsFile(path, int(payload["version"]), names, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--index", type=Path, required=True, help="an index `math2 index build` made")
    ap.add_argument("--sets", type=Path, default=SETS, help="the dev sets (default: this repo's)")
    ap.add_argument("--out", type=Path, required=True, help="the rows file to write")
    ap.add_argument("--pool", type=int, help="each part's top the first stage keeps "
                    "(default: the math2's own POOL)")  # fmt: skip
    args = ap.parse_args()
    c0, t0, load = time.process_time(), time.perf_counter(), os.getloadavg()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)
    rows = query_rows(ix, items) if args.pool is None else query_rows(ix, items, args.pool)
    save_rows(args.out, rows)
    print(
        f"{args.out}: {len(rows)} dev-set queries, RANKER_VERSION {RANKER_VERSION}, "
        f"{len(FEATURES)} features; {time.process_time() - c0:.0f} s CPU, "
        f"{time.perf_counter() - t0:.0f} s wall, load average {load} -> {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
