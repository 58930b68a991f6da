"""Issue 45 §3 and §6: the CPU that the name-word features (`features.NAME_COLUMNS`:
`name_cover`, `name_extra` and the `parts_*` coverages, `features._name_columns`) add to
`features.candidate_features`, the step a ranked search runs once per query after its first
stage.

    python benchmarks/feature_cost.py --index STORE/.math2/index/mathlib [--every 3]

Every `--every`-th dev-set query's first stage is computed once beforehand (`rankings`, the
fusion), then `candidate_features` is timed in CPU per query with the columns computed and
with them replaced by zeros, alternating which runs first query by query (even queries with,
odd without first), after one untimed pass that warms the pages. Twice: with
`nameparts.document_parts`' cache warm (a long-lived process: `index serve`, a run's
retriever) and cleared before each call (a cold `math2 search`'s first query). Prints mean,
p50 and p95 of each, and the load average before and after: compare CPU, not wall.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import math2.retrieval.features as features
from math2.retrieval.devsets import devsets_dir, read_devsets
from math2.retrieval.index import W_DENSE, SearchIndex
from math2.retrieval.nameparts import document_parts
from math2.retrieval.stage import Rankings, fuse

NameColumns = Callable[..., dict[str, np.ndarray]]


def _off(
    ix: SearchIndex, query: str, weights: dict[str, float], names: list[str], cands: np.ndarray
) -> dict[str, np.ndarray]:
    return {f: np.zeros(len(cands)) for f in features.NAME_COLUMNS}


def _stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[int(0.95 * (len(xs) - 1))]
    return f"mean {statistics.mean(xs):.2f} p50 {xs[len(xs) // 2]:.2f} p95 {p95:.2f} ms CPU"


def measure(
    ix: SearchIndex, firsts: list[tuple[str, Rankings, dict[int, float]]], cold: bool
) -> dict[str, list[float]]:
    """CPU ms of `candidate_features` per query, with and without the name-word columns."""
    real: NameColumns = features._name_columns
    times: dict[str, list[float]] = {"with": [], "without": []}
    try:
        for i, (query, r, fused) in enumerate(firsts):
            order: list[tuple[str, NameColumns]] = [("with", real), ("without", _off)]
            for label, fn in order if i % 2 == 0 else order[::-1]:
                features._name_columns = fn  # type: ignore[assignment]
                if cold:
                    document_parts.cache_clear()
                c0 = time.process_time()
                features.candidate_features(ix, query, r, fused)
                times[label].append(1000 * (time.process_time() - c0))
    finally:
        features._name_columns = real  # type: ignore[assignment]
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--index", type=Path, required=True, help="an index `math2 index build` made")
    ap.add_argument("--sets", type=Path, default=devsets_dir(), help="the dev sets")
    ap.add_argument("--every", type=int, default=3, help="time every N-th dev-set query")
    ap.add_argument("--pool", type=int, default=100, help="each part's top the first stage keeps")
    args = ap.parse_args()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)[:: args.every]
    weights = ix.fusion_weights(0.0, W_DENSE)
    firsts = []
    for it in items:
        (r,) = ix.rankings([it.query], args.pool, terms=True)
        firsts.append((it.query, r, fuse(r, weights, ix.prior)))
    for query, r, fused in firsts:  # warm the pages
        features.candidate_features(ix, query, r, fused)
    print(f"{len(firsts)} queries; load average {os.getloadavg()}")
    for cold in (False, True):
        cache = "cleared before each call" if cold else "warm"
        for label, xs in measure(ix, firsts, cold).items():
            print(f"document_parts cache {cache}, {label} name-word columns: {_stats(xs)}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
