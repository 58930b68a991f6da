"""Issue 45 §3: train the learned ranker again over an index that is already built, without
rebuilding the index's parts (`ranker.build_ranker`, as `math2 index build` calls it last).

    python benchmarks/retrain_ranker.py --index STORE/.math2/index/mathlib [--sets DIR]

For measuring a change to the features or the model on a copy of a store whose index passes did
not change (the features are computed from the index's parts at query time). The artifact it
writes is the one the build writes (`<index>/ranker/`, RANKER_VERSION and FEATURES of the math2
on PYTHONPATH), so a search over the copy then orders by it. A copy of a store, never a user's:
the old ranker is removed first.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from math2.retrieval.devsets import devsets_dir, read_devsets
from math2.retrieval.index import SearchIndex
from math2.retrieval.ranker import build_ranker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--index", type=Path, required=True, help="an index `math2 index build` made")
    ap.add_argument(
        "--sets",
        type=Path,
        default=devsets_dir(),
        help="the dev sets (default: the ones `math2 index build` trains on)",
    )
    args = ap.parse_args()
    c0, t0, load = time.process_time(), time.perf_counter(), os.getloadavg()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    info = build_ranker(ix, read_devsets(args.sets, kinds), print)
    if info is None:
        raise SystemExit(f"retrain_ranker: no ranker built over {args.index}")
    print(
        f"{time.process_time() - c0:.0f} s CPU, {time.perf_counter() - t0:.0f} s wall, "
        f"load average {load} -> {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
