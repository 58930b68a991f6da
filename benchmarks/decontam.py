"""Decontamination throughput: a 100K-item synthetic dataset against every registered benchmark.

    nice -n 10 .venv/bin/python benchmarks/decontam.py BENCHMARKS_DIR --items 100000

The dataset is synthetic informal/formal pairs (mathematical words, Lean-ish tokens) with
benchmark items planted: a whole informal statement, a whole formal statement, a 13-token window
of a statement re-cased and re-punctuated inside other text, and (as a negative control) a
12-token window that must not be flagged. Reported: index build time, records per second and MB
per second, and planted items found / missed / false flags.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time

from math2.checks.ngrams import tokens
from math2.eval import Decontaminator, Mode, shared_registry

WORDS = [
    "let",
    "suppose",
    "show",
    "prove",
    "that",
    "every",
    "group",
    "ring",
    "field",
    "module",
    "ideal",
    "prime",
    "order",
    "map",
    "set",
    "real",
    "integer",
    "sum",
    "limit",
    "sequence",
    "function",
    "continuous",
    "bounded",
    "finite",
    "subgroup",
    "normal",
    "element",
    "of",
    "the",
    "a",
    "an",
    "is",
    "are",
    "for",
    "all",
    "there",
    "exists",
    "such",
    "and",
    "or",
    "if",
    "then",
    "with",
    "where",
    "its",
]
LEAN = [
    "theorem",
    "lemma",
    "Nat",
    "Real",
    "∀",
    "∃",
    "→",
    "↔",
    ":",
    ":=",
    "by",
    "(",
    ")",
    "[",
    "]",
    "Finset.sum",
    "Group",
    "Ring",
    "x",
    "y",
    "n",
    "f",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("benchmarks")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--planted", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    reg = shared_registry(a.benchmarks)
    t0 = time.perf_counter()
    dec = Decontaminator(reg)
    build = time.perf_counter() - t0

    recs = [
        {
            "id": i,
            "informal": " ".join(rng.choices(WORDS, k=rng.randint(15, 60))) + ".",
            "formal": f"theorem t{i} " + " ".join(rng.choices(LEAN, k=rng.randint(10, 40))),
        }
        for i in range(a.items)
    ]
    items = [(v.label, it) for v in reg for it in v.items]
    planted: dict[int, str] = {}
    negatives: set[int] = set()
    for j in range(a.planted):
        pos = rng.randrange(a.items)
        while pos in planted or pos in negatives:
            pos = rng.randrange(a.items)
        label, it = items[rng.randrange(len(items))]
        kind = j % 4
        if kind == 0:
            recs[pos]["informal"] = it.informal
        elif kind == 1:
            recs[pos]["formal"] = it.formal
        else:
            toks = tokens(it.informal)
            if len(toks) < 14:
                recs[pos]["informal"] = "Exercise: " + it.informal
            elif kind == 2:
                s = rng.randrange(len(toks) - 13 + 1)
                recs[pos]["informal"] = "So " + " ".join(toks[s : s + 13]).upper() + "; done."
            else:  # negative control: 12 tokens only, between words no benchmark has
                recs[pos]["informal"] = "zzq " + " ".join(toks[:12]) + " qqz"
                negatives.add(pos)
                continue
        planted[pos] = label
    size = sum(len(r["informal"]) + len(r["formal"]) for r in recs)
    t0 = time.perf_counter()
    out, rep = dec.run(recs, ["informal", "formal"], Mode.FLAG)
    flagged = {r["id"] for r in out if "contaminated_by" in r}
    secs = time.perf_counter() - t0
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "benchmark_versions": len(reg),
        "benchmark_texts": 2 * len(items),
        "index_build_s": round(build, 2),
        "records": rep.records,
        "mb": round(size / 1e6, 1),
        "scan_s": round(secs, 2),
        "records_per_s": round(rep.records / secs),
        "mb_per_s": round(size / 1e6 / secs, 2),
        "planted": len(planted),
        "found": len(flagged & set(planted)),
        "missed": len(set(planted) - flagged),
        "negative_controls": len(negatives),
        "false_flags": len(flagged - set(planted)),
        "by_benchmark": rep.by_benchmark,
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
