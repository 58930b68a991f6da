"""What the index build's notation pass costs, read from the checkout again (before issue 45 §6)
or from the notation commands the import stored, and whether both give the same table.

    python benchmarks/notation_pass.py --store /path/to/math2.db --mathlib /path/to/mathlib4

The store must hold Mathlib imported by this checkout's code (`math2 import mathlib PATH`, which
stores the notation commands it reads). The names are those `math2 index build` resolves
against (the active, completable mentions, in id order). Each way runs `--runs` times,
alternating; CPU is `time.process_time` (user + system of this process), wall beside, the load
average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from sqlalchemy import select

from math2.retrieval.notation import read_table, stored_notation, table_of
from math2.store import Mention, Source, Store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--mathlib", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    store = Store(f"sqlite:///{args.store}")
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        assert src is not None, "no mathlib in the store"
        names = list(
            s.scalars(
                select(Mention.name)
                .where(
                    Mention.source_id == src.id,
                    Mention.status == "active",
                    Mention.allow_completion.is_(True),
                )
                .order_by(Mention.id)
            )
        )
    print(
        f"{len(names)} names; load average before {'/'.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    cost: dict[str, list[tuple[float, float]]] = {"checkout scan": [], "stored": []}
    tables = {}
    for _ in range(args.runs):
        c0, w0 = time.process_time(), time.perf_counter()
        tables["checkout scan"] = read_table(args.mathlib, names)
        cost["checkout scan"].append((time.process_time() - c0, time.perf_counter() - w0))
        c0, w0 = time.process_time(), time.perf_counter()
        with store.session() as s:
            declared = stored_notation(s, src.id)
            assert declared is not None, "the import stored no notation: import with this code"
            tables["stored"] = table_of(declared, names)
        cost["stored"].append((time.process_time() - c0, time.perf_counter() - w0))
    print("| notation pass | CPU s (median) | wall s (median) | symbols |\n|---|---|---|---|")
    for way, xs in cost.items():
        cpu, wall = statistics.median(c for c, _ in xs), statistics.median(w for _, w in xs)
        print(f"| {way} | {cpu:.2f} | {wall:.2f} | {len(tables[way].symbols)} |")
    a, b = tables["checkout scan"], tables["stored"]
    same = a.symbols == b.symbols and a.scoped == b.scoped
    print(f"same table: {same}; load average after {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
