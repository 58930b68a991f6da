"""Issue 45's levers over one built index, per dev set (query style) and per target kind.

    python benchmarks/retrieval_words.py --index .math2/index/mathlib [--sets benchmarks/devsets]

Reads an index built by `math2 index build` (every declaration of the library, never a pool)
and the dev sets written for math2 (`benchmarks/devsets/*.yaml`: each query's style is its set,
its target kind the item's `kind`, theorem where the older sets record none). Measures, in one
run over the same index, nDCG@10 and Recall@50 of:

- `both off`: the default search (the fusion as before issue 45 §1, on this index);
- `all on`: both rankings at their measured weights (`W_PARTS_MEASURED`,
  `W_GLOSSES_MEASURED`); `name parts off`, `glosses off`: one of them;
- `all on` with each mapping family of the name-part ranking left out (`english`, `vocabulary`,
  `convention`, `latex`; `nameparts.FAMILIES`);

then the CPU and wall milliseconds per query (p50, p95) of the default search at k = 10 and
k = 100, with the run's CPU time and load average beside its wall time. Ratios are against
`both off` in the same run.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from math2.retrieval.index import W_GLOSSES_MEASURED, W_PARTS_MEASURED, SearchIndex
from math2.retrieval.nameparts import FAMILIES

Item = tuple[str, set[str], str]  # query, relevant names, target kind


def load_sets(folder: Path, names: set[str]) -> dict[str, list[Item]]:
    out = {}
    for f in sorted(folder.glob("*.yaml")):
        items = yaml.safe_load(f.read_text()) or []
        out[f.stem] = [
            (it["q"], set(it["a"]) & names, it.get("kind", "theorem"))
            for it in items
            if set(it["a"]) & names
        ]
    return out


def ndcg(found: list[str], rel: set[str]) -> tuple[float, float]:
    dcg = sum(1 / math.log2(i + 2) for i, n in enumerate(found[:10]) if n in rel)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    return dcg / idcg, len(rel & set(found[:50])) / len(rel)


ON = {"parts_weight": W_PARTS_MEASURED, "glosses_weight": W_GLOSSES_MEASURED}


def configs() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("both off (before §1)", {"parts_weight": 0.0, "glosses_weight": 0.0}),
        ("all on", ON),
        ("name parts off", {**ON, "parts_weight": 0.0}),
        ("glosses off", {**ON, "glosses_weight": 0.0}),
        *((f"family {f} off", {**ON, "families": FAMILIES - {f}}) for f in sorted(FAMILIES)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=Path(__file__).parent / "devsets")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    base = SearchIndex(args.index)
    sets = load_sets(args.sets, set(base.names))
    print(f"index {args.index}: {len(base)} declarations; sets: "
          + ", ".join(f"{k} {len(v)}" for k, v in sets.items()))  # fmt: skip
    base_row: dict[str, float] = {}
    print("| configuration | cut | queries | nDCG@10 (ratio) | R@50 |")
    print("|---|---|---|---|---|")
    for label, kw in configs():
        index = SearchIndex(args.index, **kw)
        cells: dict[str, list[tuple[float, float]]] = {}
        for style, items in sets.items():
            found = index.search_batch([q for q, _, _ in items], 50)
            for (_, rel, kind), hits in zip(items, found, strict=True):
                s = ndcg([h.name for h in hits], rel)
                for cut in ("all", f"style {style}", f"kind {kind}"):
                    cells.setdefault(cut, []).append(s)
        for cut in sorted(cells, key=lambda c: (c != "all", c)):
            rows = cells[cut]
            n = statistics.mean(r[0] for r in rows)
            b = base_row.setdefault(cut, n)
            print(f"| {label} | {cut} | {len(rows)} | {n:.3f} ({n / b if b else float('nan'):.2f})"
                  f" | {statistics.mean(r[1] for r in rows):.3f} |")  # fmt: skip
    queries = [q for items in sets.values() for q, _, _ in items]
    for k in (10, 100):
        wall, cpu = [], []
        base.search(queries[0], k)
        for q in queries:
            w0, p0 = time.perf_counter(), time.process_time()
            base.search(q, k)
            wall.append((time.perf_counter() - w0) * 1000)
            cpu.append((time.process_time() - p0) * 1000)
        p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
        print(
            f"k={k}: CPU p50 {statistics.median(cpu):.1f} ms p95 {p95(cpu):.1f} ms; wall p50 "
            f"{statistics.median(wall):.1f} ms p95 {p95(wall):.1f} ms ({len(queries)} queries)"
        )
    print(
        f"run: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
