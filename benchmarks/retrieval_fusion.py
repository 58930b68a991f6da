"""Does the dense part earn its cost? Levers of issue 24 item 4 measured per query style.

    python benchmarks/retrieval_fusion.py --db sqlite:///m.db --work .math2/bench-retrieval \
        [--top 30] [--encoder bge-small]

Uses the full-index v3 and v4 indexes `benchmarks/retrieval.py` built under `--work` (with the
same seed: the same held-out docstrings and list titles) and its dev sets: `titles`,
`natural`, `lean`, `latex`, `docstrings` (never MathlibQR/MathlibMPR). Every lever reorders the
default path's top `--top` (v4 BM25 + stems + aids, over all of Mathlib): the encoder embeds
those candidates exactly as `math2 index build --dense` embeds a declaration
(`text.dense_text`; a held-out docstring stays hidden), so the figures are those of the dense
part restricted to what BM25 already found (its recall beyond the top `--top` is not measured
here; see docs/benchmarks.md, *Dense part over all of Mathlib*, for the full dense index).

Levers, each as nDCG@10 / R@10 / MRR per set and its ratio to plain BM25 (v3) in the same run:
- `dense w`: reciprocal-rank fusion with the cosine rank at a fixed weight (the current fusion);
- `per kind W`: the dense weight is W × the query's share of English words
  (`text.prose_tokens`): a Lean or LaTeX formula gets ~0, a sentence gets W;
- `learned`: a logistic model over (BM25 reciprocal rank, cosine, prose share, share × cosine),
  fitted on the other sets only (leave one set out), scores the candidates.
CPU cost: candidate embedding speed, query encoding p50/p95 (the added default-path latency).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from retrieval_sets import docstring_split, lists, split_lists, written
from sqlalchemy import select

from math2.retrieval.dense import MAX_TOKENS
from math2.retrieval.encoder import load_encoder
from math2.retrieval.index import RRF_K, SearchIndex
from math2.retrieval.text import dense_text, prose_tokens
from math2.store import Mention, Source, Store
from retrieval import _score, metrics


def features(bm25_rank: np.ndarray, cos: np.ndarray, share: float) -> np.ndarray:
    rr = 60.0 / (RRF_K + bm25_rank + 1)
    return np.stack([np.ones_like(cos), rr, cos, np.full_like(cos, share), share * cos], axis=1)


def fit_logistic(x: np.ndarray, y: np.ndarray, steps: int = 3000, lr: float = 0.5) -> np.ndarray:
    """Plain logistic regression by gradient descent (L2 0.01), positives weighted up."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    mu[0], sd[0] = 0.0, 1.0
    z = (x - mu) / sd
    w = np.zeros(x.shape[1])
    pos = max(1.0, (len(y) - y.sum()) / max(1.0, y.sum()))
    sw = np.where(y > 0, pos, 1.0)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        w -= lr * ((z.T @ ((p - y) * sw)) / sw.sum() + 0.01 * w)
    return np.concatenate([w / sd, [-(w[1:] * mu[1:] / sd[1:]).sum()]])


def apply_logistic(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return x @ w[:-1] + w[-1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--work", type=Path, default=Path(".math2/bench-retrieval"))
    ap.add_argument(
        "--crosswalk", type=Path,
        default=Path(__file__).resolve().parents[1] / "data" / "crosswalk",
    )  # fmt: skip
    ap.add_argument("--devsets", type=Path, default=Path(__file__).parent / "devsets")
    ap.add_argument("--docstrings", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--encoder", default="bge-small")
    args = ap.parse_args()
    store = Store(args.db)
    doc_items, hidden = docstring_split(args.db, args.docstrings, args.seed)
    v3, v4 = SearchIndex(args.work / "v3"), SearchIndex(args.work / "v4")
    names = set(v4.names)
    title_dev, _ = split_lists(lists(args.crosswalk, names), args.seed)
    sets = {"titles": title_dev, **written(args.devsets, names), "docstrings": doc_items}
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()} (shared with other jobs: timings are upper bounds)"
    )
    print(f"full index: {len(v4)} declarations; sets: "
          + ", ".join(f"{k} {len(v)}" for k, v in sets.items()))  # fmt: skip
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        active = select(Mention.id).where(Mention.source_id == src.id,
                                          Mention.status == "active",
                                          Mention.allow_completion.is_(True))  # fmt: skip
        n_all = len(s.execute(active).all())
        n_doc = len(s.execute(active.where(Mention.docstring.is_not(None))).all())
    print(
        f"declarations with a docstring: {n_doc} of {n_all} ({n_doc / n_all:.0%}): the rest "
        "are embedded as name words + Lean statement only"
    )

    rows = {}
    with store.session() as s:
        for r in s.execute(select(Mention.id, Mention.name, Mention.statement, Mention.docstring)
                           .where(Mention.source_id == src.id)):  # fmt: skip
            rows[r[0]] = r
    enc = load_encoder(args.encoder, MAX_TOKENS[args.encoder])
    cand = {k: v4.rank_bm25([q for _, q, _ in v], args.top) for k, v in sets.items()}
    need = sorted({int(p) for rs in cand.values() for r in rs for p in r})
    texts = []
    for p in need:
        mid, name, stmt, doc = rows[int(v4.ids[p])]
        texts.append(dense_text(name, stmt, None if mid in hidden else doc))
    t0 = time.perf_counter()
    vecs = dict(zip(need, enc.encode(texts), strict=True))
    dt = time.perf_counter() - t0
    print(f"{args.encoder}: {len(texts)} candidate documents embedded in {dt:.0f} s "
          f"({len(texts) / dt:.0f} docs/s; all of Mathlib ≈ {n_all / (len(texts) / dt) / 60:.0f} "
          "min at this speed)")  # fmt: skip
    qvec, qtimes = {}, []
    for k, v in sets.items():
        for _, q, _ in v:
            t0 = time.perf_counter()
            qvec[(k, q)] = enc.encode_queries([q])[0]
            qtimes.append((time.perf_counter() - t0) * 1000)
    qtimes.sort()
    print(
        f"query encoding, one at a time: p50 {statistics.median(qtimes):.1f} ms, "
        f"p95 {qtimes[int(0.95 * (len(qtimes) - 1))]:.1f} ms"
    )

    # per set: each query's candidates, cosines, share, relevance
    data = {}
    for k, v in sets.items():
        data[k] = []
        for (_, q, rel), c in zip(v, cand[k], strict=True):
            c = np.asarray(c, dtype=np.int64)
            cos = np.array([vecs[int(p)] @ qvec[(k, q)] for p in c], dtype=np.float64)
            share = prose_tokens(q, True)[1]
            y = np.array([v4.names[int(p)] in rel for p in c], dtype=np.float64)
            data[k].append((c, cos, share, rel, y))

    def evaluate(order_fn) -> dict[str, dict[str, float]]:
        out = {}
        for k, items in data.items():
            tot = dict.fromkeys(("nDCG@10", "R@10", "R@50", "MRR"), 0.0)
            for i, (c, cos, share, rel, _) in enumerate(items):
                order = order_fn(k, i, c, cos, share) if len(c) else []
                _score([v4.names[int(c[j])] for j in order], rel, tot)
            out[k] = {m: x / max(1, len(items)) for m, x in tot.items()}
        return out

    def rrf(weight_fn):
        def order(k, i, c, cos, share):
            r = np.arange(len(c))
            dr = np.empty(len(c), dtype=np.int64)
            dr[np.argsort(-cos, kind="stable")] = r
            fused = 1 / (RRF_K + r + 1) + weight_fn(share) / (RRF_K + dr + 1)
            return np.argsort(-fused, kind="stable")

        return order

    models = {}
    for held in data:
        xs, ys = [], []
        for k, items in data.items():
            if k != held:
                for c, cos, share, _, y in items:
                    if len(c):
                        xs.append(features(np.arange(len(c)), cos, share))
                        ys.append(y)
        models[held] = fit_logistic(np.concatenate(xs), np.concatenate(ys))

    def learned(k, i, c, cos, share):
        s = apply_logistic(models[k], features(np.arange(len(c)), cos, share))
        return np.argsort(-s, kind="stable")

    base = {k: metrics(v3, v, ("bm25",), prior_weight=0.0) for k, v in sets.items()}
    configs = {
        f"default path (v4 BM25 + aids), top {args.top} as is": lambda k, i, c, cos, s: range(
            len(c)
        ),
        "dense only (cosine order of the top)": lambda k, i, c, cos, s: np.argsort(-cos),
        "+ dense, w 0.3 (the current fusion)": rrf(lambda s: 0.3),
        "+ dense, w 1": rrf(lambda s: 1.0),
        **{f"+ dense per kind, w {w} × prose share": rrf(lambda s, w=w: w * s)
           for w in (0.5, 1.0, 2.0)},
        "+ learned fusion (logistic, leave one set out)": learned,
    }  # fmt: skip
    print("\n| lever | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    print("| plain BM25 (v3, full index) | "
          + " | ".join(f"{base[k]['nDCG@10']:.3f} (1.00)" for k in sets) + " |")  # fmt: skip
    for label, fn in configs.items():
        res = evaluate(fn)
        cells = [
            f"{res[k]['nDCG@10']:.3f} ({res[k]['nDCG@10'] / base[k]['nDCG@10']:.2f})" for k in sets
        ]
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    for k, w in models.items():
        print(f"learned weights without {k}: " + " ".join(f"{x:+.2f}" for x in w))


if __name__ == "__main__":
    main()
