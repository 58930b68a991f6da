"""Retrieval quality and latency over all of Mathlib, on a set built from the benchmarks.

    MATH2_DATA__MATHLIB_DIR=/path/to/mathlib4 math2 build
    math2 index build --dense
    python benchmarks/retrieval.py --index .math2/index/mathlib [--data ../shared/data/benchmarks]

For each miniF2F / ProofNet item, the relevant set is the Mathlib constants its formal
statement uses (identifiers resolved as full names, or through the header's `open`
namespaces); the query is its informal statement. Reported: recall@2, recall@10 and MRR for
BM25 alone, dense alone, their fusion without and with the PageRank prior, then p50/p95
latency of one query over the whole index.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import time
from pathlib import Path

from math2.retrieval.index import SearchIndex

_IDENT = re.compile(r"[A-Za-z_][\w.'!?]*")
_OPEN = re.compile(r"^open\s+(.+)$", re.M)


def relevant(stmt: str, header: str, names: set[str]) -> set[str]:
    opens = [ns for line in _OPEN.findall(header) for ns in line.split()]
    found = set()
    for t in set(_IDENT.findall(stmt)):
        for cand in (t, *(f"{ns}.{t}" for ns in opens)):
            if cand in names:
                found.add(cand)
                break
    return found


def informal(item: dict) -> str:
    text = item.get("informal_prefix") or item.get("informal_statement") or ""
    return text.replace("/--", "").replace("-/", "").strip()


def load_set(data: Path, names: set[str]) -> list[tuple[str, str, set[str]]]:
    items = []
    for f in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (data / f).read_text().splitlines():
            it = json.loads(line)
            rel = relevant(it["formal_statement"], it.get("header", ""), names)
            q = informal(it)
            if rel and q:
                items.append((it["name"], q, rel))
    return items


def evaluate(ix: SearchIndex, items, parts, k_pool: int = 100) -> dict[str, float]:
    queries = [q for _, q, _ in items]
    r2 = r10 = mrr = 0.0
    for start in range(0, len(queries), 64):
        batch = ix.search_batch(queries[start : start + 64], k=10, pool=k_pool, parts=parts)
        for hits, (_, _, rel) in zip(batch, items[start : start + 64], strict=True):
            names = [h.name for h in hits]
            r2 += len(rel & set(names[:2])) / len(rel)
            r10 += len(rel & set(names[:10])) / len(rel)
            first = next((i for i, n in enumerate(names) if n in rel), None)
            mrr += 1 / (first + 1) if first is not None else 0
    n = len(items)
    return {"recall@2": r2 / n, "recall@10": r10 / n, "MRR": mrr / n}


def latency(ix: SearchIndex, queries: list[str], parts) -> tuple[float, float]:
    ts = []
    for q in queries:
        t0 = time.perf_counter()
        ix.search(q, k=10, parts=parts)
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(0.95 * (len(ts) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, default=Path(".math2/index/mathlib"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/benchmarks"))
    ap.add_argument("--latency-queries", type=int, default=200)
    args = ap.parse_args()
    ix = SearchIndex(args.index)
    if not ix.has_dense:
        raise SystemExit(f"{args.index} has no dense embeddings: run `math2 index build --dense`")
    items = load_set(args.data, set(ix.names))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"index: {len(ix.ids)} Mathlib declarations; retrieval set: {len(items)} items "
        f"({sum(len(r) for _, _, r in items) / len(items):.1f} relevant constants each)\n"
    )
    configs = [
        ("BM25", ("bm25",)),
        ("dense", ("dense",)),
        ("BM25 + dense", ("bm25", "dense")),
        ("fusion (BM25 + dense + prior)", ("bm25", "dense", "prior")),
    ]
    print("| method | recall@2 | recall@10 | MRR | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    qs = [q for _, q, _ in items][: args.latency_queries]
    ix.search("warm up", parts=("bm25", "dense"))
    for label, parts in configs:
        m = evaluate(ix, items, parts)
        p50, p95 = latency(ix, qs, parts)
        print(
            f"| {label} | {m['recall@2']:.3f} | {m['recall@10']:.3f} | {m['MRR']:.3f} | "
            f"{p50:.1f} | {p95:.1f} |"
        )


if __name__ == "__main__":
    main()
