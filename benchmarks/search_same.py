"""Whether a change to the query path changed a result: every dev-set query's top 100 through
`Searcher.search` (mention ids in order, scores) and the first stage's candidates and feature
rows (`features.candidate_features`, a digest), written by one checkout and compared with
another's.

    PYTHONPATH=BEFORE/src python benchmarks/search_same.py --store S --out before.json
    PYTHONPATH=AFTER/src python benchmarks/search_same.py --store S --out after.json \
        --against before.json

The queries are every dev set's (`benchmarks/devsets/*.yaml`, the ones `search_inprocess.py`
samples among them); the ranker's training rows are these feature rows, so equal rows mean an
equal ranker.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import yaml

from math2.retrieval.features import candidate_features
from math2.retrieval.index import W_DENSE
from math2.retrieval.searcher import Searcher
from math2.retrieval.stage import fuse

DEVSETS = Path(__file__).parent / "devsets"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--library", default="mathlib")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--against", type=Path, help="an earlier --out to compare with")
    args = ap.parse_args()
    queries = [
        it["q"] for f in sorted(DEVSETS.glob("*.yaml")) for it in yaml.safe_load(f.read_text())
    ]
    searcher = Searcher(args.store / ".math2" / "index")
    ix = searcher.index(args.library)
    out = {}
    for q in queries:
        hits = searcher.search(q, args.library, 100)
        (r,) = ix.rankings([q], 100, terms=True)
        cands, rows = candidate_features(
            ix, q, r, fuse(r, ix.fusion_weights(0.0, W_DENSE), ix.prior)
        )
        blob = cands.tobytes() + np.ascontiguousarray(rows, dtype=np.float64).tobytes()
        out[q] = {
            "ids": [h.mention_id for h in hits],
            "scores": [h.hit.score for h in hits],
            "k10": [h.mention_id for h in searcher.search(q, args.library, 10)],
            "rows": hashlib.sha256(blob).hexdigest()[:16],
        }
    args.out.write_text(json.dumps(out))
    print(f"{len(out)} queries written to {args.out}")
    if args.against:
        before = json.loads(args.against.read_text())
        differ = {key: [q for q in out if before.get(q, {}).get(key) != out[q][key]]
                  for key in ("ids", "k10", "scores", "rows")}  # fmt: skip
        print(f"against {args.against}: differing queries " +
              ", ".join(f"{key} {len(qs)}" for key, qs in differ.items()))  # fmt: skip
        for key, qs in differ.items():
            for q in qs[:3]:
                print(f"  {key}: {q!r}")


if __name__ == "__main__":
    main()
