"""Issue 45: the shipped search scored on dev sets nobody tuned on, as the maintainers score
theirs: every query through exactly what `math2 search` runs for one library (`Searcher.search`,
the index's shipped learned ranker, trained by the index build on `benchmarks/devsets/`), top
10, nDCG@10 per target kind and per set.

    python benchmarks/retrieval_blind.py --index-dir STORE/.math2/index --out NEW.json \
        [--sets benchmarks/devsets-blind] [--baseline OLD.json] [--label NAME]

The sets default to `benchmarks/devsets-blind/` (written blind, never training data: see its
README row). `retrieval_ranker.py` cross-validates within the sets it reads; this script
instead scores the model the build shipped, on sets outside its training data, so no fold
split is needed and none of these queries was seen by the model or read while choosing a rule
(a set whose misses were read stops being blind: say so where its figures are reported).

`--out` keeps each query's top 10 with the run's label, the math2 source it ran and the index's
ranker record; `--baseline` reads such a file of another code or index over the same queries
and prints the paired verdict per cut (`retrieval_ranker.verdict`: the mean difference against
twice its standard error). A file of other queries is refused with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from retrieval_ranker import per_query, table, verdict

import math2
from math2.retrieval.devsets import DevItem, DevSetError, read_devsets
from math2.retrieval.searcher import Searcher

BLIND = Path(__file__).resolve().parent / "devsets-blind"
FORMAT = 1


def top10(searcher: Searcher, items: list[DevItem], library: str) -> list[list[str]]:
    return [[h.hit.name for h in searcher.search(it.query, library, k=10)] for it in items]


def _load(path: Path, items: list[DevItem]) -> tuple[str, list[list[str]]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"{path}: cannot be read as a result file ({exc})")
    ok = isinstance(data, dict) and data.get("format") == FORMAT
    if not ok or data.get("queries") != [it.query for it in items]:
        sys.exit(f"{path}: not a result of this script over these sets' queries (in order)")
    top = data.get("top10")
    if not isinstance(top, list) or len(top) != len(items) or "label" not in data:
        sys.exit(f"{path}: its top 10s are not one list per query")
    return str(data["label"]), top


def _commit(folder: Path) -> str | None:
    """The git commit of the checkout `folder` is in, where it is one (else None)."""
    import subprocess

    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    return done.stdout.strip() or None if done.returncode == 0 else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index-dir", type=Path, required=True, help="a store's .math2/index folder")
    p.add_argument("--library", default="mathlib")
    p.add_argument("--sets", type=Path, default=BLIND)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--baseline", type=Path, help="another run's --out file, same queries")
    p.add_argument("--label", default="this checkout")
    args = p.parse_args()
    searcher = Searcher(args.index_dir)
    ix = searcher.index(args.library)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    try:  # every item, those whose answers the index lacks too (they score 0, never dropped)
        items = read_devsets(args.sets, kinds, every=True)
    except DevSetError as exc:
        sys.exit(str(exc))
    if not items:
        sys.exit(f"{args.sets}: no dev-set query found")
    absent = [it.query for it in items if not any(a in kinds for a in it.answers)]
    base = _load(args.baseline, items) if args.baseline else None  # before the searches
    load0, cpu0, wall0 = os.getloadavg(), time.process_time(), time.perf_counter()
    found = top10(searcher, items, args.library)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    ranker = args.index_dir / args.library / "ranker" / "ranker.json"
    args.out.write_text(json.dumps({
        "format": FORMAT, "label": args.label, "math2": str(Path(math2.__file__).parent),
        "commit": _commit(Path(math2.__file__).parent),
        "ranker": json.loads(ranker.read_text()) if ranker.exists() else None,
        "queries": [it.query for it in items], "top10": found,
    }))  # fmt: skip
    print(f"{len(items)} queries from {args.sets}; {cpu:.1f} s CPU, {wall:.1f} s wall, "
          f"load {load0[0]:.2f} -> {os.getloadavg()[0]:.2f}; math2 at "
          f"{Path(math2.__file__).parent}")  # fmt: skip
    configs = {args.label: found}
    if base:
        label, old = base
        configs = {label: old, args.label: found}
    table(configs, items, base=next(iter(configs)))
    if args.baseline:
        print()
        verdict(found, configs[label], items, heads=(label, args.label))
    scores = per_query(found, items)
    if absent:
        print(f"\n{len(absent)} queries have no answer in the index (scored 0): {absent}")
    print(f"\nqueries with an answer in the top 10: {sum(s > 0 for s in scores)} of {len(items)}")


if __name__ == "__main__":
    main()
