"""Issue 45 §1 (branch rank46): each of `english.OPERATIONS`' rows (measured with "sum" →
`sum add`, "difference" → `sub sdiff`, "quotient" → `div quotient`; only "sum" is kept, see
english.py) measured on its own, under the
learned ranker cross-validated on the dev sets as `retrieval_ranker.py` does it.

    python benchmarks/english_rows.py --index STORE/.math2/index/mathlib [--rows-dir DIR]

For each variant (every row, as shipped; each row left out in turn; each alone; none of them,
which is main's table) the first
stage and the feature rows are made again with that table (`ranker.query_rows`: the rows feed
the words part's synonyms, the name-part ranking and the name features), kept in `--rows-dir`
(`ranker_rows.py`'s format, read back where present), and cross-validated
(`retrieval_ranker.cross_validated`, the shipped settings). Printed: one table of every
variant per kind and style, and each variant's per-cut verdict against "none of them".
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from ranker_rows import load_rows, save_rows
from retrieval_ranker import cross_validated, fold_of, per_query, ranked, table, verdict

from math2.retrieval import english
from math2.retrieval.devsets import DevItem, devsets_dir, read_devsets
from math2.retrieval.index import SearchIndex
from math2.retrieval.ranker import QueryRows, fit, mixed, query_rows


def use_rows(names: set[str]) -> None:
    """The English table with only the `OPERATIONS` rows in `names` (the others out)."""
    out = {english.OPERATIONS[n][0] for n in english.OPERATIONS if n not in names}
    english._RULES[:] = [
        (rx, w)
        for rx, w in _ALL
        if rx.pattern.removeprefix(r"\b(?:").removesuffix(r")\b") not in out
    ]
    english._mathlib_words.cache_clear()


_ALL = list(english._RULES)


def changed(
    ix: SearchIndex,
    rows_of: dict[str, list[QueryRows]],
    configs: dict[str, list[list[str]]],
    items: Sequence[DevItem],
    base: str,
    folds: int,
) -> None:
    """Each variant over only the queries whose rows it changes (a changed row changes the
    model every fold trains, which moves the other queries too: that is training noise, not
    the row's effect), ordered by its own cross-validated model and by the base's (each
    fold's model trained on the base's rows, so that only the query's own rows differ)."""
    same: dict[str, list[list[str]]] = {v: [[] for _ in items] for v in rows_of}
    for k in range(folds):
        model = fit([d for d in rows_of[base] if fold_of(d.item, folds) != k])
        for v, data in rows_of.items():
            for i, d in enumerate(data):
                if fold_of(d.item, folds) == k and len(d.positions):
                    s = mixed(model.predict(d.rows), d.rows)
                    same[v][i] = ranked(
                        ix, dict(zip(d.positions.tolist(), s.tolist(), strict=True))
                    )
    print(f"\nthe queries each variant's rows change, against {base}: nDCG@10 (difference, 2 × SE)")
    print("| variant | queries | own model | the base's model |")
    print("|---|---|---|---|")
    b_own, b_same = per_query(configs[base], items), per_query(same[base], items)
    for v, data in rows_of.items():
        if v == base:
            continue
        at = [i for i, (x, y) in enumerate(zip(data, rows_of[base], strict=True))
              if x.rows.shape != y.rows.shape or (x.rows != y.rows).any()
              or (x.positions != y.positions).any()]  # fmt: skip
        cells = []
        for got, ref in (
            (per_query(configs[v], items), b_own),
            (per_query(same[v], items), b_same),
        ):
            d = [got[i] - ref[i] for i in at]
            se2 = 2 * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("inf")
            mean_new = statistics.mean(got[i] for i in at) if at else 0.0
            cells.append(f"{mean_new:.3f} ({statistics.mean(d) if d else 0.0:+.3f}, {se2:.3f})")
        print(f"| {v} | {len(at)} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=devsets_dir())
    ap.add_argument("--rows-dir", type=Path, default=Path("/tmp/english_rows"))
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    t0, c0, load0 = time.perf_counter(), time.process_time(), os.getloadavg()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)
    queries = [it.query for it in items]
    every = set(english.OPERATIONS)
    variants = {"every row (shipped)": every, "none of them": set()}
    for n in sorted(every):
        variants[f"all but {n}"] = every - {n}
        variants[f"{n} alone"] = {n}
    args.rows_dir.mkdir(parents=True, exist_ok=True)
    configs = {}
    rows_of: dict[str, list[QueryRows]] = {}
    for label, names in variants.items():
        use_rows(names)
        path = args.rows_dir / ("rows_" + "_".join(sorted(names) or ["none"]) + ".pkl")
        if path.exists():
            data = load_rows(path, queries).rows
        else:
            data = query_rows(SearchIndex(args.index, use_ranker=False), items)
            save_rows(path, data)
        rows_of[label] = data
        configs[label] = next(iter(cross_validated(ix, data, args.folds).values()))
        print(f"{label}: rows and cross-validation done, {time.process_time() - c0:.0f} s CPU",
              flush=True)  # fmt: skip
    use_rows(every)
    base = "none of them"
    table(configs, items, base)
    for label in configs:
        if label != base:
            print(f"\n{label} against {base}, per cut:")
            verdict(configs[label], configs[base], items, ("none", label))
    changed(ix, rows_of, configs, items, base, args.folds)
    print(f"\nrun: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {load0} -> {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
