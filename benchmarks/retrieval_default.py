"""Issue 45 §6 (what it must show): `retrieval.py`'s lever table on the default path — the
learned ranker — each lever on and off, per target kind and per query style, CPU beside, over
one index `math2 index build` built (all of Mathlib), on the written dev sets shaped like users.

    python benchmarks/retrieval_default.py --index .math2/index/mathlib [--folds 5] \
        [--levers namesakes bodies …] [--cpu-queries 200]

`retrieval.py --levers` builds an index per document-side lever and measures the fusion; this
script measures the levers a search turns on and off at query time (a `SearchIndex` setting),
over the one index, where the default path is the ranker:

- each configuration's first stage and features are computed with the lever off (or on, for
  the levers off by default), and the ranker is cross-validated on them exactly as
  `retrieval_ranker.py` does (`cross_validated`: five folds grouped by target, a model trained
  on the other four with the shipped settings and mix): a lever's row is what a ranker
  trained without the lever gives, not the shipped model fed features it never saw;
- beside it, the fusion (`stage.fuse`, the `--fusion` order) with the same lever setting;
- CPU per query: the first stage + features of every dev query (batched, as the ranker's
  training computes them; mean), and `SearchIndex.search(q, k=10)` with the shipped model on a
  fixed sample (`--cpu-queries`; p50, p95; the model's quality is irrelevant to its cost).

Levers whose off-state needs another index (index text v3/v4 stems, the documents' names
without «», the library's notation in the documents, the dense and informal parts) are not
measured here: `retrieval.py --levers` builds those (with the fusion).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from retrieval_ranker import _cuts, cross_validated, per_query, ranked, table

from math2.retrieval.devsets import devsets_dir, read_devsets
from math2.retrieval.index import SearchIndex
from math2.retrieval.ranker import query_rows
from math2.retrieval.weights import (
    W_AIDS,
    W_BODY,
    W_NAMESAKE,
    W_SHAPE,
    W_SYNONYMS,
    W_TRANSLATED,
    W_VOCABULARY_MEASURED,
)

DEFAULT = "every default lever (the shipped setting)"
# lever → (its row's label, the SearchIndex settings of that row)
LEVERS: dict[str, tuple[str, dict[str, Any]]] = {
    "namesakes": (f"namesakes off (on: {W_NAMESAKE})", {"namesake_weight": 0.0}),
    "bodies": (f"bodies off (on: {W_BODY})", {"body_weight": 0.0}),
    "shapes": (f"formula shapes off (on: {W_SHAPE})", {"shape_weight": 0.0}),
    "aids": (f"search aids off (on: {W_AIDS})", {"aids_weight": 0.0}),
    "synonyms": (f"Mathlib words of the English off (on: {W_SYNONYMS}, English "
                 f"{W_TRANSLATED})", {"synonym_weight": 0.0, "translated_weight": 1.0}),
    "notation": ("query notation off", {"notation": False}),
    "renames": ("renames not followed", {"renames": False}),
    "nameparts": ("name-part matching off (every mapping family)", {"families": frozenset()}),
    "parents": ("parents' docstrings on (0.1; off by default)", {"parents_weight": 0.1}),
    "vocabulary": (f"mined vocabulary as extra words on ({W_VOCABULARY_MEASURED}; off by "
                   "default)", {"vocabulary_weight": W_VOCABULARY_MEASURED}),
}  # fmt: skip


def cpu_of_search(ix: SearchIndex, queries: list[str]) -> tuple[float, float]:
    """CPU ms p50 and p95 of `ix.search(q, 10)` with the shipped model, one query at a time."""
    ix.search(queries[0], 10, ranker=True)
    cpu = []
    for q in queries:
        c0 = time.process_time()
        ix.search(q, 10, ranker=True)
        cpu.append((time.process_time() - c0) * 1000)
    cpu.sort()
    return statistics.median(cpu), cpu[int(0.95 * (len(cpu) - 1))]


def differences(configs: dict[str, list[list[str]]], items: list, base: str) -> None:
    """Per ranker row and cut: the mean paired nDCG@10 difference to `base` and twice its
    standard error (the cut's noise); a lever matters on a cut where |difference| > 2 × SE."""
    cuts = _cuts(items)
    ref = per_query(configs[base], items)
    print("| ranker row − default | " + " | ".join(f"{c} ({len(v)})" for c, v in cuts.items())
          + " |\n|---|" + "---|" * len(cuts))  # fmt: skip
    for label, names in configs.items():
        if label == base or not label.startswith("ranker"):
            continue
        mine = per_query(names, items)
        cells = []
        for ix in cuts.values():
            d = [mine[i] - ref[i] for i in ix]
            se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("inf")
            mark = "**" if abs(statistics.mean(d)) > 2 * se else ""
            cells.append(f"{mark}{statistics.mean(d):+.3f}{mark} ± {2 * se:.3f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=devsets_dir())
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--levers", nargs="*", choices=list(LEVERS), default=list(LEVERS))
    ap.add_argument("--cpu-queries", type=int, default=200)
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    base = SearchIndex(args.index, use_ranker=False)
    kinds = {n: base.cards[i].kind for i, n in enumerate(base.names)}
    items = read_devsets(args.sets, kinds)
    sample = [it.query for it in items][:: max(1, len(items) // args.cpu_queries)]
    print(f"index {args.index}: {len(base)} declarations; {len(items)} dev-set queries answered "
          f"in it; {args.folds} folds; load average {os.getloadavg()}", flush=True)  # fmt: skip
    configs: dict[str, list[list[str]]] = {}
    cost = []
    for label, settings in [(DEFAULT, {}), *(LEVERS[k] for k in args.levers)]:
        ix = SearchIndex(args.index, **settings)
        s0 = time.process_time()
        data = query_rows(ix, items)
        stage_ms = (time.process_time() - s0) * 1000 / max(1, len(items))
        assert ix.learned is not None, f"{args.index}: no learned ranker (math2 index build)"
        mix = (ix.learned.mix, ix.learned.order)  # the shipped model's mix of the first stage
        configs[f"ranker, {label}"] = cross_validated(ix, data, args.folds, mixes=(mix,))[mix]
        configs[f"fusion, {label}"] = [ranked(ix, d.fused) for d in data]
        p50, p95 = cpu_of_search(ix, sample)
        cost.append((label, stage_ms, p50, p95))
        print(f"  {label}: done ({time.perf_counter() - t0:.0f} s wall, load "
              f"{os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    print("\nnDCG@10 (ratio to the ranker with every default lever):\n")
    table(configs, items, f"ranker, {DEFAULT}")
    print("\nEach ranker row against the default, paired (± 2 × SE; bold beyond it):\n")
    differences(configs, items, f"ranker, {DEFAULT}")
    print(f"\nCPU per query ({len(items)} queries batched for the first stage + features; "
          f"{len(sample)} one at a time for the search)\n")  # fmt: skip
    print("| configuration | first stage + features, mean ms | search k=10 (ranker) CPU p50 ms "
          "| CPU p95 ms |\n|---|---|---|---|")  # fmt: skip
    for label, stage_ms, p50, p95 in cost:
        print(f"| {label} | {stage_ms:.1f} | {p50:.1f} | {p95:.1f} |")
    print(f"\nrun: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
