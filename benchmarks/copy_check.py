"""Copy-check throughput: query text per second, one core, against a large reference index.

    nice -n 10 .venv/bin/python benchmarks/copy_check.py --reference-mb 100 --query-mb 20

OpenWebMath is not reachable offline, so the reference is synthetic prose: words drawn from a
Zipf law over a 60,000-word vocabulary (mathematical English has a similar long tail), in
documents of about 8 KB, with punctuation and capitals so the tokenizer does its full work. The
queried text is fresh prose of the same kind with paragraphs of the reference planted in it;
the script checks that every planted paragraph is found. Reported: index build time, index size,
and query throughput in MB of text per second (single process, single thread), for the fast
path (`hits`, the decontamination test) and the full report (`overlap`, spans and documents).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from math2.checks.ngrams import NgramIndex


def _vocab(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 11, size)
    return ["".join(rng.choice(letters, k)) for k in lengths]


def _docs(rng, vocab, total_bytes: int, doc_bytes: int = 8000):
    """Synthetic documents until `total_bytes` of text."""
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    words = np.array(vocab)
    made = 0
    while made < total_bytes:
        ws = words[rng.choice(len(vocab), doc_bytes // 6, p=p)].tolist()
        for i in range(0, len(ws), 12):
            ws[i] = ws[i].capitalize()
            ws[min(i + 11, len(ws) - 1)] += "."
        text = " ".join(ws)
        made += len(text)
        yield text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference-mb", type=float, default=100.0)
    ap.add_argument("--query-mb", type=float, default=20.0)
    ap.add_argument("--n", type=int, default=13)
    ap.add_argument("--plants", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    vocab = _vocab(60_000, rng)

    t0 = time.perf_counter()
    ref = [(f"ref-{i}", t) for i, t in enumerate(_docs(rng, vocab, int(args.reference_mb * 1e6)))]
    t_gen = time.perf_counter() - t0
    ref_bytes = sum(len(t.encode()) for _, t in ref)

    t0 = time.perf_counter()
    index = NgramIndex.build(ref, n=args.n)
    t_build = time.perf_counter() - t0

    # queries: fresh documents with reference paragraphs planted in some of them
    queries = list(_docs(rng, vocab, int(args.query_mb * 1e6)))
    planted = []
    for k in range(args.plants):
        qi = int(rng.integers(len(queries)))
        doc_id, text = ref[int(rng.integers(len(ref)))]
        words = text.split()
        a = int(rng.integers(0, len(words) - 80))
        para = " ".join(words[a : a + 60])
        queries[qi] = queries[qi] + "\n\n" + para + "\n\n" + " ".join(words[:3]) + f" tail{k}"
        planted.append((qi, doc_id))
    q_bytes = sum(len(t.encode()) for t in queries)

    t0 = time.perf_counter()
    total_hits = sum(index.hits(t) for t in queries)
    t_hits = time.perf_counter() - t0

    t0 = time.perf_counter()
    reports = [index.overlap(t) for t in queries]
    t_overlap = time.perf_counter() - t0

    found = sum(
        any(doc_id in s.docs and s.ngrams >= 60 - args.n + 1 for s in reports[qi].spans)
        for qi, doc_id in planted
    )
    print(
        json.dumps(
            {
                "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
                " (shared with other jobs)",
                "n": args.n,
                "reference_mb": round(ref_bytes / 1e6, 1),
                "reference_docs": len(ref),
                "index_ngrams": index.size,
                "index_mb": round(index.size * 12 / 1e6, 1),
                "generate_s": round(t_gen, 1),
                "build_s": round(t_build, 1),
                "query_mb": round(q_bytes / 1e6, 1),
                "hits_s": round(t_hits, 2),
                "hits_mb_per_s": round(q_bytes / 1e6 / t_hits, 2),
                "overlap_s": round(t_overlap, 2),
                "overlap_mb_per_s": round(q_bytes / 1e6 / t_overlap, 2),
                "matched_ngrams": total_hits,
                "planted_found": f"{found}/{len(planted)}",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
