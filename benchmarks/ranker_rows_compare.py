"""Issue 45 §3: several rows files (`ranker_rows.py`, each made by one code or first-stage width
over the same index and dev sets) cross-validated side by side, each against the first, per
target kind and query style: nDCG@10, the mean paired difference and twice its standard error
(`+`/`-` where the difference is beyond that).

    python benchmarks/ranker_rows_compare.py --index STORE/.math2/index/mathlib \\
        BASELINE.pkl OTHER.pkl [...]

Each file is trained and scored under the feature names it records (`load_rows(prefix=True)`:
an older math2's rows whose features are a prefix of this one's), with the shipped mix and
order (`ranker.MIX`, `ranker.ORDER`), five folds grouped by target (`retrieval_ranker.py`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from ranker_rows import RowsFileError, load_rows
from retrieval_ranker import _cuts, cross_validated, per_query

from math2.retrieval.devsets import devsets_dir, read_devsets
from math2.retrieval.index import SearchIndex


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=devsets_dir())
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("rows", type=Path, nargs="+", help="rows files, the baseline first")
    args = ap.parse_args()
    c0, t0, load = time.process_time(), time.perf_counter(), os.getloadavg()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)
    queries = [it.query for it in items]
    scores: list[list[float]] = []
    for path in args.rows:
        try:
            rf = load_rows(path, queries, prefix=True)
        except RowsFileError as exc:
            raise SystemExit(f"ranker_rows_compare: {exc}") from None
        found = sum(bool(d.labels.any()) for d in rf.rows)
        print(f"{path}: RANKER_VERSION {rf.version}, {len(rf.features)} features, an answer "
              f"among the candidates for {found}/{len(rf.rows)}")  # fmt: skip
        names = next(iter(cross_validated(ix, rf.rows, args.folds, features=rf.features).values()))
        scores.append(per_query(names, items))
    print("| cut | " + " | ".join(p.stem for p in args.rows) + " |")
    print("|---|" + "---|" * len(args.rows))
    for cut, at in _cuts(items).items():
        base = [scores[0][i] for i in at]
        cells = [f"{cut} ({len(at)})", f"{statistics.mean(base):.3f}"]
        for other in scores[1:]:
            d = [other[i] - b for i, b in zip(at, base, strict=True)]
            mean = statistics.mean(d)
            se2 = 2 * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("inf")
            flag = " +" if mean > se2 else " -" if -mean > se2 else ""
            cells.append(
                f"{statistics.mean(other[i] for i in at):.3f} ({mean:+.3f} ± {se2:.3f}){flag}"
            )
        print("| " + " | ".join(cells) + " |")
    print(f"run: {time.process_time() - c0:.0f} s CPU, {time.perf_counter() - t0:.0f} s wall, "
          f"load average {load} -> {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
