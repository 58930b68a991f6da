"""Issue 45 (branch rank46): LightGBM's monotone constraints on the ranker's ordered features,
measured against the shipped unconstrained training, on the dev sets' rows.

    python benchmarks/ranker_monotone.py --rows ROWS.pkl [--size N --repeats R] [SET ...]

Each constraint set (`SETS`) says which features may only raise a candidate's score as they
grow (+1: more of the query's words in the name or text, a higher score) or as they fall (−1:
a better rank in a part); the rest are free. Grouped cross-validation as
`retrieval_ranker.py` does it (folds by a hash of each item's first answer; `--size N`: each
fold's model trained on N answered queries drawn from the other folds, `--repeats` draws,
seeds 0, 1, …), the shipped mix (`ranker.MIX`, `ranker.ORDER`). nDCG@10 from the candidates'
labels (`ranker_mix_curve.ndcg10`: no renames followed), each set's mean paired difference to
the unconstrained model with twice its standard error, over all queries and per kind and style.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import time
from pathlib import Path

import numpy as np
from ranker_mix_curve import fold_of, ndcg10

from math2.retrieval import ranker
from math2.retrieval.features import FEATURES
from math2.retrieval.ranker import QueryRows, fit, mixed
from math2.retrieval.stage import LEXICAL_TERMS

RANKS = ("fused_rank", "lexical_rank", "namesake_rank", "parts_rank", "gloss_rank",
         "dense_rank", "desc_rank")  # fmt: skip
COVER = ("parts_coverage", "parts_reliable", "parts_groups", "name_cover")
SCORES = ("fused", "lexical", "lexical_ratio", *(f"term_{t}" for t in LEXICAL_TERMS),
          "namesake_cover", "parts_score", "parts_precision", "parts_last", "gloss_score",
          "coverage")  # fmt: skip
# name → (features that may only raise the score as they grow, … as they fall)
SETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cover": (COVER, ()),
    "ranks": ((), RANKS),
    "cover+ranks": (COVER, RANKS),
    "all ordered": (COVER + SCORES, (*RANKS, "name_extra")),
}


def params(name: str) -> dict[str, object]:
    up, down = SETS[name]
    out = dict(ranker.PARAMS)
    out["monotone_constraints"] = [1 if f in up else -1 if f in down else 0 for f in FEATURES]
    return out


def scores(
    data: list[QueryRows], p: dict[str, object] | None, size: int, repeats: int
) -> list[float]:
    """Each query's nDCG@10 (per draw, queries in order within a draw) under `p`."""
    out: list[float] = []
    for seed in range(repeats if size else 1):
        per = [0.0] * len(data)
        for k in range(5):
            pool = [d for d in data if fold_of(d.item.answers, 5) != k and d.labels.any()]
            train = random.Random(seed).sample(pool, min(size, len(pool))) if size else pool
            model = fit(train, params=p)
            for i, d in enumerate(data):
                if fold_of(d.item.answers, 5) == k and len(d.positions):
                    s = mixed(model.predict(d.rows), d.rows)
                    per[i] = ndcg10(s, d.labels, len(d.item.answers))
        out += per
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, required=True)
    ap.add_argument("--size", type=int, default=0, help="training queries a fold (0: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("sets", nargs="*", default=list(SETS))
    args = ap.parse_args()
    t0, c0, load0 = time.perf_counter(), time.process_time(), os.getloadavg()
    data: list[QueryRows] = pickle.loads(args.rows.read_bytes())["rows"]
    draws = args.repeats if args.size else 1
    cuts: dict[str, list[int]] = {"all": list(range(len(data) * draws))}
    for r in range(draws):
        for i, d in enumerate(data):
            cuts.setdefault(f"kind {d.item.kind}", []).append(r * len(data) + i)
            cuts.setdefault(f"style {d.item.style}", []).append(r * len(data) + i)
    plain = scores(data, None, args.size, args.repeats)
    print(f"unconstrained: all {statistics.mean(plain):.3f} "
          f"(trained on {args.size or 'all'} a fold, {draws} draw(s))")  # fmt: skip
    for name in args.sets:
        got = scores(data, params(name), args.size, args.repeats)
        print(f"\n{name}: all {statistics.mean(got):.3f}")
        print("| cut | unconstrained | constrained | difference | 2 × SE | verdict |")
        print("|---|---|---|---|---|---|")
        for cut, ix in sorted(cuts.items(), key=lambda kv: (kv[0] != "all", kv[0])):
            diff = np.array([got[i] - plain[i] for i in ix])
            se2 = 2 * diff.std(ddof=1) / len(diff) ** 0.5 if len(diff) > 1 else float("inf")
            mean = float(diff.mean())
            word = "BETTER" if mean > se2 else "WORSE" if -mean > se2 else "within noise"
            print(f"| {cut} ({len(ix) // draws}) | {statistics.mean(plain[i] for i in ix):.3f} | "
                  f"{statistics.mean(got[i] for i in ix):.3f} | {mean:+.3f} | {se2:.3f} | "
                  f"{word} |")  # fmt: skip
    print(f"\nrun: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {load0} -> {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
