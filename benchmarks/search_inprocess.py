"""The one search's own cost, in one process: `math2.retrieval.search` (scope, merge, resolve)
against the index's lower-level path (`SearchIndex.search` + a snippet per hit, what
`math2 search` ran before issue 23.2), alternating, the index files dropped from the page cache
before each call (cold), and checking both give the same hits.

    python benchmarks/search_inprocess.py --store /path/to/store-folder [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from search_cli import QUERIES, drop_cache

from math2.retrieval import Searcher
from math2.retrieval.index import SearchIndex


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    root = args.store / ".math2" / "index"

    def lower(q: str) -> list:
        ix = SearchIndex(root / "mathlib")
        return [(h.name, ix.snippet(h.position)) for h in ix.search(q, 10)]

    def one_search(q: str) -> list:
        return [(h.name, h.statement) for h in Searcher(root).search(q, "mathlib", 10)]

    paths = {"SearchIndex + snippets": lower, "math2.retrieval.search": one_search}
    times: dict[str, list[float]] = {k: [] for k in paths}
    for rep in range(args.runs):
        for q in QUERIES:
            for label, fn in list(paths.items())[:: 1 if rep % 2 else -1]:
                drop_cache(root)
                t0 = time.perf_counter()
                fn(q)
                times[label].append(time.perf_counter() - t0)
            assert lower(q) == one_search(q), q
    print("| path (cold) | p50 ms | max ms |\n|---|---|---|")
    for label, ts in times.items():
        print(f"| {label} | {statistics.median(ts) * 1000:.0f} | {max(ts) * 1000:.0f} |")


if __name__ == "__main__":
    main()
