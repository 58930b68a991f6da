"""Retrieval quality and latency on Mathlib, on a set built from the benchmarks.

    MATH2_DATA__MATHLIB_DIR=/path/to/mathlib4 math2 build      # imports Mathlib, builds BM25
    python benchmarks/retrieval.py --db sqlite:///math2.db --full-index .math2/index/mathlib

For each miniF2F / ProofNet item, the relevant set is the Mathlib constants its formal
statement uses (identifiers resolved as full names, or through the header's `open`
namespaces); the query is its informal statement.

Quality is measured on a pool: every relevant constant plus `--distractors` declarations drawn
at random (seeded) from all of Mathlib, all embedded for real, and every method searches the
same pool. (Embedding all 241,562 declarations takes over an hour on two CPU cores; with a full
dense index, pass `--pool-index` pointing at it instead.)

Latency is measured at the size of all of Mathlib: BM25 over the full index, and the dense part
as a real query encoding plus a similarity pass over a matrix with one row per Mathlib
declaration (the pool's real vectors, the rest random unit vectors: the values do not change the
time). Reported: recall@2, recall@10 and MRR for BM25 alone, dense alone, BM25 + dense, and the
fusion with the PageRank prior; p50/p95 latency of one query.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import time
from pathlib import Path

import numpy as np

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


def build_pool(db: str, out: Path, items_names: set[str], distractors: int, seed: int) -> Path:
    """Index every relevant constant plus `distractors` random Mathlib declarations."""
    from sqlalchemy import select

    from math2.retrieval.index import build_index
    from math2.store import Mention, Source, Store

    store = Store(db)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        rows = s.execute(
            select(Mention.id, Mention.name).where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
        ).all()
    rng = random.Random(seed)
    rel = {mid for mid, name in rows if name in items_names}
    rest = sorted(mid for mid, _ in rows if mid not in rel)
    pool = rel | set(rng.sample(rest, min(distractors, len(rest))))
    meta = out / "meta.json"
    if not meta.exists() or json.loads(meta.read_text())["count"] != len(pool):
        build_index(store, out, dense=True, only=pool, progress=lambda m: print(f"  {m}"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--full-index", type=Path, default=Path(".math2/index/mathlib"))
    ap.add_argument("--pool-index", type=Path, default=Path(".math2/index/retrieval-pool"))
    ap.add_argument("--distractors", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=Path("../shared/data/benchmarks"))
    ap.add_argument("--latency-queries", type=int, default=200)
    args = ap.parse_args()
    full = SearchIndex(args.full_index)
    items = load_set(args.data, set(full.names))
    wanted = set().union(*(r for _, _, r in items))
    pool = SearchIndex(build_pool(args.db, args.pool_index, wanted, args.distractors, args.seed))
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"machine: {machine}")
    each = sum(len(r) for _, _, r in items) / len(items)
    print(
        f"retrieval set: {len(items)} items ({each:.1f} relevant constants each, "
        f"{len(wanted)} distinct)"
    )
    print(
        f"quality pool: {len(pool.ids)} declarations (all relevant + {args.distractors} "
        f"random); full index: {len(full.ids)} declarations\n"
    )
    configs = [
        ("BM25", ("bm25",)),
        ("dense", ("dense",)),
        ("BM25 + dense", ("bm25", "dense")),
        ("fusion (BM25 + dense + prior)", ("bm25", "dense", "prior")),
    ]
    # Latency at full size: the full BM25 index, and a dense matrix with the full row count.
    rng = np.random.default_rng(args.seed)
    filler = rng.standard_normal((len(full.ids) - len(pool.ids), pool.dense.shape[1]))
    filler /= np.linalg.norm(filler, axis=1, keepdims=True)
    full.dense = np.concatenate([pool.dense, filler.astype(np.float32)])
    full._encoder = pool._enc()
    qs = [q for _, q, _ in items][: args.latency_queries]
    full.search("warm up", parts=("bm25", "dense"))
    print("| method | recall@2 | recall@10 | MRR | p50 ms (all Mathlib) | p95 ms (all Mathlib) |")
    print("|---|---|---|---|---|---|")
    for label, parts in configs:
        m = evaluate(pool, items, parts)
        p50, p95 = latency(full, qs, parts)
        print(
            f"| {label} | {m['recall@2']:.3f} | {m['recall@10']:.3f} | {m['MRR']:.3f} | "
            f"{p50:.1f} | {p95:.1f} |"
        )


if __name__ == "__main__":
    main()
