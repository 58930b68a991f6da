"""Issue 45 (branch rank46): how much of the first stage's order the learned ranker's score
should mix in, as a function of how many queries the model was trained on.

    python benchmarks/ranker_mix_curve.py --rows ROWS.pkl [--sizes 44 100 250 500 0]
        [--mixes 0.25 0.5 1 2] [--repeats 3] [--folds 5]

Over the rows `ranker_rows.py` made for the dev sets (this math2's features), grouped
cross-validation as `retrieval_ranker.py` does it (folds by a hash of each item's first
answer): for each fold and each training size n (0: every training query), a model is trained
on n queries drawn at random from the other folds (`--repeats` draws, seeds 0, 1, …) and orders
the held fold under each mix (`ranker.mixed`, the shipped order). nDCG@10 is read from the
candidates' labels (no renames followed, a query without an answer among its candidates 0), so
figures are comparable across sizes and mixes, not to `retrieval_ranker.py`'s to the digit.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import random
import statistics
import time
from pathlib import Path

import numpy as np

from math2.retrieval import ranker
from math2.retrieval.ranker import ORDER, QueryRows, fit, mixed


def fold_of(answers: frozenset[str], folds: int) -> int:
    import hashlib

    return int(hashlib.sha256(min(answers).encode()).hexdigest(), 16) % folds


def ndcg10(scores: np.ndarray, labels: np.ndarray, answers: int) -> float:
    if not len(scores):
        return 0.0
    top = np.argsort(-scores, kind="stable")[:10]
    dcg = sum(1 / math.log2(i + 2) for i, j in enumerate(top.tolist()) if labels[j] > 0)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(answers, 10)))
    return dcg / idcg


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=[44, 100, 250, 500, 0])
    ap.add_argument("--mixes", type=float, nargs="*", default=[0.25, 0.5, 1.0, 2.0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    t0, c0, load0 = time.perf_counter(), time.process_time(), os.getloadavg()
    data: list[QueryRows] = pickle.loads(args.rows.read_bytes())["rows"]
    for label, params in {"plain": ranker.PARAMS}.items():
        print(f"\n{label}: nDCG@10 by training size (rows) and mix (columns), {len(data)} queries")
        print("| trained on | " + " | ".join(f"mix {m:g}" for m in args.mixes) + " |")
        print("|---|" + "---|" * len(args.mixes))
        for size in args.sizes:
            per: dict[float, list[float]] = {m: [] for m in args.mixes}
            repeats = 1 if size == 0 else args.repeats
            for seed in range(repeats):
                for k in range(args.folds):
                    pool = [d for d in data if fold_of(d.item.answers, args.folds) != k]
                    answered = [d for d in pool if d.labels.any()]
                    train = pool if size == 0 else random.Random(seed).sample(
                        answered, min(size, len(answered)))  # fmt: skip
                    model = fit(train, params=params)
                    for d in data:
                        if fold_of(d.item.answers, args.folds) != k:
                            continue
                        raw = model.predict(d.rows) if len(d.positions) else np.zeros(0)
                        for m in args.mixes:
                            s = mixed(raw, d.rows, m, ORDER) if len(raw) else raw
                            per[m].append(ndcg10(s, d.labels, len(d.item.answers)))
            name = "all" if size == 0 else f"{size} (× {repeats})"
            print(f"| {name} | " + " | ".join(f"{statistics.mean(per[m]):.3f}"
                                              for m in args.mixes) + " |")  # fmt: skip
    print(f"\nrun: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {load0} -> {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
