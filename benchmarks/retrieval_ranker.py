"""Issue 45 §3: the learned ranker against the hand-tuned fusion, per target kind and per query
style, on the dev sets shaped like users, over one index built by `math2 index build`.

    python benchmarks/retrieval_ranker.py --index .math2/index/mathlib [--folds 5]

The ranker is measured under cross-validation grouped by target: the dev-set items are split
into `--folds` folds by a hash of their first answer (so a target asked in two styles is never
on both sides), a model is trained on the other folds with the shipped settings
(`ranker.fit`) and orders the held fold's candidates. No figure here is on a query its model
was trained on. The shipped model (`<index>/ranker/`, trained on every item) is timed, not
scored. Configurations, all over the same first stage (`SearchIndex.rankings`, each part's
top 100, their union the candidates):

- `fusion (default before §3)`: the hand-tuned fusion (`stage.fuse`), name parts and glosses
  off, as searches ran before;
- `fusion + name parts, glosses W`: the same with them fused (tied ranks shared,
  `stage.Rankings.shared_ranks`) at `W_PARTS_MEASURED`, `W_GLOSSES_MEASURED` (2 and 1, as
  measured at 0.249 before) and at a quarter of those;
- `ranker`: every feature; `ranker − X`: the features of X left out (held constant);
- `first stage recall`: the share of items with an answer among the candidates.

Then CPU and wall ms per query (p50, p95) of `SearchIndex.search` at k = 10 and k = 100 with the
fusion and with the shipped ranker, with the run's CPU time and load average.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from retrieval_report import score

from math2.retrieval.devsets import DevItem, devsets_dir, read_devsets
from math2.retrieval.features import FEATURES
from math2.retrieval.index import W_GLOSSES_MEASURED, W_PARTS_MEASURED, SearchIndex
from math2.retrieval.ranker import QueryRows, fit, query_rows
from math2.retrieval.stage import fuse

# Feature groups left out one at a time (their columns held at 0 in training and testing).
GROUPS = {
    "name parts": ("parts_score", "parts_rank", "parts_coverage", "parts_precision"),
    "glosses": ("gloss_score", "gloss_rank"),
    "fusion features": ("fused", "fused_rank"),
    "kind, depth, family head": (
        "kind", "depth", "name_length", "family_members", "family_member_of"),
    "query features": ("query_prose", "query_tokens", "query_mapped", "query_latex"),
    "prior": ("prior",),
}  # fmt: skip


def fold_of(item: DevItem, folds: int) -> int:
    target = min(item.answers)
    return int(hashlib.sha256(target.encode()).hexdigest(), 16) % folds


def ranked(ix: SearchIndex, scores: dict[int, float]) -> list[str]:
    """Names best first, renamed declarations followed as a search does."""
    scores = dict(scores)
    ix._follow_renames(scores)
    return [ix.name(p) for p, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:50]]


def cross_validated(
    ix: SearchIndex, data: Sequence[QueryRows], folds: int, drop: Sequence[str] = ()
) -> list[list[str]]:
    cols = [FEATURES.index(f) for f in drop]
    out: list[list[str]] = [[] for _ in data]
    for k in range(folds):
        train = [d for d in data if fold_of(d.item, folds) != k]
        if cols:
            train = [QueryRows(d.item, d.positions, _without(d.rows, cols), d.labels, d.fused)
                     for d in train]  # fmt: skip
        model = fit(train)
        for i, d in enumerate(data):
            if fold_of(d.item, folds) == k and len(d.positions):
                s = model.predict(_without(d.rows, cols))
                out[i] = ranked(ix, dict(zip(d.positions.tolist(), s.tolist(), strict=True)))
    return out


def _without(rows: np.ndarray, cols: list[int]) -> np.ndarray:
    if not cols:
        return rows
    rows = rows.copy()
    rows[:, cols] = 0.0
    return rows


def table(configs: dict[str, list[list[str]]], items: Sequence[DevItem], base: str) -> None:
    cuts: dict[str, list[int]] = {"all": list(range(len(items)))}
    for i, it in enumerate(items):
        cuts.setdefault(f"kind {it.kind}", []).append(i)
        cuts.setdefault(f"style {it.style}", []).append(i)
    order = sorted(cuts, key=lambda c: (c != "all", c))
    print("| configuration | " + " | ".join(f"{c} ({len(cuts[c])})" for c in order) + " |")
    print("|---|" + "---|" * len(order))
    means = {
        label: {c: statistics.mean(score(names[i], set(items[i].answers))["nDCG@10"]
                                   for i in cuts[c]) for c in order}
        for label, names in configs.items()
    }  # fmt: skip
    for label, row in means.items():
        cells = []
        for c in order:
            b = means[base][c]
            cells.append(f"{row[c]:.3f}" + (f" ({row[c] / b:.2f})" if label != base and b else ""))
        print(f"| {label} | " + " | ".join(cells) + " |")


def latency(ix: SearchIndex, queries: list[str], ranker: bool) -> str:
    out = []
    for k in (10, 100):
        ix.search(queries[0], k, ranker=ranker)
        wall, cpu = [], []
        for q in queries:
            w0, p0 = time.perf_counter(), time.process_time()
            ix.search(q, k, ranker=ranker)
            wall.append((time.perf_counter() - w0) * 1000)
            cpu.append((time.process_time() - p0) * 1000)
        p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
        out.append(f"k={k}: CPU p50 {statistics.median(cpu):.1f} ms p95 {p95(cpu):.1f} ms, "
                   f"wall p50 {statistics.median(wall):.1f} ms p95 {p95(wall):.1f} ms")  # fmt: skip
    return "; ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=devsets_dir())
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--no-ablations", action="store_true")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)
    print(f"index {args.index}: {len(ix)} declarations; {len(items)} dev-set queries "
          f"answered in it; load average {os.getloadavg()}")  # fmt: skip
    data = query_rows(ix, items)
    print(f"first stage + features: {time.process_time() - c0:.0f} s CPU")
    found = sum(d.labels.any() for d in data)
    lexical_found = 0
    for d in data:
        top = ix.rankings([d.item.query], parts=("bm25", "aids"))[0].lexical
        names = {ix.name(p) for p in (top.tolist() if top is not None else [])}
        lexical_found += bool(names & d.item.answers)
    print(f"first stage recall: {found}/{len(data)} items have an answer among the candidates "
          f"(the lexical top 100 alone: {lexical_found})")  # fmt: skip
    configs = {"fusion (default before §3)": [ranked(ix, d.fused) for d in data]}
    for share in (1.0, 0.25):
        wp, wg = W_PARTS_MEASURED * share, W_GLOSSES_MEASURED * share
        on = SearchIndex(args.index, use_ranker=False, parts_weight=wp, glosses_weight=wg)
        configs[f"fusion + name parts {wp:g}, glosses {wg:g}"] = [
            ranked(ix, fuse(r, on.fusion_weights(0.0, 1.0), ix.prior))
            for r in on.rankings([d.item.query for d in data])
        ]
    configs |= {
        "ranker (cross-validated)": cross_validated(ix, data, args.folds),
    }
    if not args.no_ablations:
        for label, group in GROUPS.items():
            configs[f"ranker − {label}"] = cross_validated(ix, data, args.folds, group)
    table(configs, items, "fusion (default before §3)")
    queries = [it.query for it in items]
    shipped = SearchIndex(args.index)
    print(f"fusion: {latency(ix, queries, False)}")
    if shipped.learned is not None:
        print(f"shipped ranker: {latency(shipped, queries, True)}")
    print(f"run: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
