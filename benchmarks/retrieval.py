"""Retrieval quality and latency over the FULL Mathlib index, on dev sets built from human data.

    math2 --db sqlite:///m.db init && math2 --db sqlite:///m.db import mathlib /path/to/mathlib4
    python benchmarks/retrieval.py --db sqlite:///m.db --work .math2/bench-retrieval

Dev sets (none is MathlibQR/MathlibMPR or a file of MathForm's harness):
- `lists`: a theorem's title → its Mathlib declarations, from Mathlib's docs/100.yaml and
  docs/1000.yaml and the 1000+ theorems pages (their Mathlib `identifiers`);
- `premises`: a miniF2F / ProofNet informal statement → the Mathlib constants its formal
  statement uses (identifiers resolved as full names or through the header's `open`s);
- `docstrings`: a seeded held-out split of Mathlib docstrings: the docstring is the query, its
  declaration the one relevant document, and that docstring is left out of every index built
  here (for every configuration alike).

Every configuration is an index over every active, completable Mathlib declaration (never a
pool); the first index's configuration (index text v1: name words + statement + docstring
through bm25s's default tokenizer, BM25 + PageRank prior) is the baseline, measured in the same
run beside v2 (words) and v3 (words + phrase part, what `math2 search` uses today). Reported
per set and configuration: nDCG@10, Recall@10, Recall@50, MRR (binary relevance), and p50/p95
latency of one query.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import re
import statistics
import time
from pathlib import Path

import yaml
from sqlalchemy import select

from math2.retrieval.index import SearchIndex, build_index
from math2.store import Mention, Source, Store

_IDENT = re.compile(r"[A-Za-z_][\w.'!?]*")
_OPEN = re.compile(r"^open\s+(.+)$", re.M)

Item = tuple[str, str, set[str]]  # (id, query, relevant names)


def premises(data: Path, names: set[str]) -> list[Item]:
    items = []
    for f in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (data / f).read_text().splitlines():
            it = json.loads(line)
            opens = [ns for ln in _OPEN.findall(it.get("header", "")) for ns in ln.split()]
            rel = set()
            for t in set(_IDENT.findall(it["formal_statement"])):
                for cand in (t, *(f"{ns}.{t}" for ns in opens)):
                    if cand in names:
                        rel.add(cand)
                        break
            q = (it.get("informal_prefix") or it.get("informal_statement") or "").strip()
            q = q.replace("/--", "").replace("-/", "").strip()
            if rel and q:
                items.append((it["name"], q, rel))
    return items


def lists(crosswalk: Path, names: set[str]) -> list[Item]:
    by_title: dict[str, set[str]] = {}
    for n in ("100", "1000"):
        data = yaml.safe_load((crosswalk / "mathlib-docs" / f"{n}.yaml").read_text())
        for v in data.values():
            if isinstance(v, dict) and v.get("title"):
                decls = ([v["decl"]] if v.get("decl") else []) + list(v.get("decls") or [])
                by_title.setdefault(v["title"].strip(), set()).update(decls)
    for page in sorted((crosswalk / "1000-plus" / "_thm").glob("*.md")):
        parts = page.read_text().split("---")
        front = yaml.safe_load(parts[1]) or {}
        title = next((ln[2:].strip() for ln in parts[1].splitlines() if ln.startswith("# ")), "")
        for e in front.get("lean") or []:
            if e.get("library") == "L" and title:
                by_title.setdefault(title, set()).update(e.get("identifiers") or [])
    return [(t, t, rel & names) for t, rel in sorted(by_title.items()) if rel & names]


def docstring_split(db: str, n: int, seed: int) -> tuple[list[Item], set[int]]:
    """`n` declarations with a docstring of at least 40 characters, chosen by a seeded hash."""
    store = Store(db)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        rows = s.execute(
            select(Mention.id, Mention.name, Mention.docstring).where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
                Mention.docstring.is_not(None),
            )
        ).all()

    def key(name: str) -> str:
        return hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()

    chosen = sorted((r for r in rows if len(r[2]) >= 40), key=lambda r: key(r[1]))[:n]
    return [(r[1], r[2], {r[1]}) for r in chosen], {r[0] for r in chosen}


def metrics(ix: SearchIndex, items: list[Item], parts, **kw) -> dict[str, float]:
    tot = dict.fromkeys(("nDCG@10", "R@10", "R@50", "MRR"), 0.0)
    for start in range(0, len(items), 64):
        chunk = items[start : start + 64]
        batch = ix.search_batch([q for _, q, _ in chunk], k=50, pool=100, parts=parts, **kw)
        for hits, (_, _, rel) in zip(batch, chunk, strict=True):
            names = [h.name for h in hits]
            dcg = sum(1 / math.log2(i + 2) for i, n in enumerate(names[:10]) if n in rel)
            idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
            tot["nDCG@10"] += dcg / idcg
            tot["R@10"] += len(rel & set(names[:10])) / len(rel)
            tot["R@50"] += len(rel & set(names)) / len(rel)
            first = next((i for i, n in enumerate(names) if n in rel), None)
            tot["MRR"] += 1 / (first + 1) if first is not None else 0.0
    return {k: v / max(1, len(items)) for k, v in tot.items()}


def latency(ix: SearchIndex, queries: list[str], parts, **kw) -> tuple[float, float]:
    ix.search("warm up", parts=parts, **kw)
    ts = []
    for q in queries:
        t0 = time.perf_counter()
        ix.search(q, k=10, parts=parts, **kw)
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(0.95 * (len(ts) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--work", type=Path, default=Path(".math2/bench-retrieval"))
    ap.add_argument("--benchmarks", type=Path, default=Path("/work/shared/data/benchmarks"))
    ap.add_argument("--crosswalk", type=Path, default=Path("/work/shared/data/crosswalk"))
    ap.add_argument("--docstrings", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument(
        "--prior-weights", type=float, nargs="*", default=[],
        help="also measure v2 BM25 + prior with these prior weights (default weight: 0.25)",
    )  # fmt: skip
    ap.add_argument("--only", help="only configurations whose label contains this")
    ap.add_argument("--reuse", action="store_true", help="reuse indexes already under --work")
    args = ap.parse_args()
    store = Store(args.db)
    doc_items, hidden = docstring_split(args.db, args.docstrings, args.seed)
    indexes: dict[int, SearchIndex] = {}
    for version in (1, 2, 3):
        folder = args.work / f"v{version}"
        t0 = time.perf_counter()
        if not (args.reuse and (folder / "meta.json").exists()):
            build_index(
            store, folder, dense=False, hide_docstrings=hidden, text_version=version,
            progress=lambda m: print(f"  {m}"),
          )  # fmt: skip
        print(f"index text v{version}: built in {time.perf_counter() - t0:.0f} s")
        indexes[version] = SearchIndex(folder)
    names = set(indexes[3].names)
    sets = {
        "lists": lists(args.crosswalk, names),
        "premises": premises(args.benchmarks, names),
        "docstrings": doc_items,
    }
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"machine: {machine} (shared with other jobs: timings are upper bounds)")
    print(f"full index: {len(indexes[3].ids)} declarations")
    for k, v in sets.items():
        rel = sum(len(r) for _, _, r in v) / max(1, len(v))
        print(f"set {k}: {len(v)} queries, {rel:.2f} relevant each")
    configs = [
        ("baseline: v1 text, BM25 + prior (first index)", 1, ("bm25", "prior"), 0.25),
        ("v1 text, BM25", 1, ("bm25",)),
        ("v2 text + query normalisation, BM25", 2, ("bm25",)),
        ("v2 text + query normalisation, BM25 + prior", 2, ("bm25", "prior"), 0.25),
        ("v3 text (v2 + phrase part), BM25 (today)", 3, ("bm25",)),
        *(
            (f"v2 text + query normalisation, BM25 + prior weight {w}", 2, ("bm25", "prior"), w)
            for w in args.prior_weights
        ),
    ]
    configs = [c for c in configs if not args.only or args.only in c[0]]
    qs = [q for v in sets.values() for _, q, _ in v][
        :: max(1, sum(map(len, sets.values())) // args.latency_queries)
    ]
    print("\n| configuration | set | nDCG@10 | R@10 | R@50 | MRR |")
    print("|---|---|---|---|---|---|")
    lat = {}
    for label, version, parts, *weight in configs:
        kw = {"prior_weight": weight[0] if weight else 0.0}
        for name, items in sets.items():
            m = metrics(indexes[version], items, parts, **kw)
            print(
                f"| {label} | {name} | {m['nDCG@10']:.3f} | {m['R@10']:.3f} | {m['R@50']:.3f} "
                f"| {m['MRR']:.3f} |",
                flush=True,
            )
        lat[label] = latency(indexes[version], qs, parts, **kw)
    print(f"\n| configuration | p50 ms | p95 ms |  ({len(qs)} queries, one at a time)")
    print("|---|---|---|")
    for label, (p50, p95) in lat.items():
        print(f"| {label} | {p50:.1f} | {p95:.1f} |")


if __name__ == "__main__":
    main()
