"""What `math2 informalize --limit N` spends before its first model call: reading and ordering
the declarations of the run.

    python benchmarks/informalize_limit.py --db sqlite:////tmp/copy/math2.db [--limit 10]

Two ways in the same process on the same store: the baseline reads the whole library, resolves
every declaration's deps and orders all of it, then keeps the first N (what `--limit` did
before); the new way (`math2.roles.informalize.select.closure_from_store`, what `--limit` does
now) reads only the modules of the first N declarations and of their dependency closure. Each
is run `--repeat` times (new way first, so the baseline cannot warm the page cache for it);
prints seconds and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

from math2.roles.informalize.select import closure_from_store
from math2.roles.informalize.sources import decls_from_store, dependency_order
from math2.store import Store


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True)
    p.add_argument("--library", default="mathlib")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args()
    store = Store(args.db)
    new_s, old_s = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        with store.session() as s:
            new = closure_from_store(s, args.library, args.limit)
        new_s.append(time.perf_counter() - t)
    for _ in range(args.repeat):
        t = time.perf_counter()
        with store.session() as s:
            full = dependency_order(decls_from_store(s, args.library))
        old = full[: args.limit]
        old_s.append(time.perf_counter() - t)
    closed = all(set(d.deps) <= {e.id for e in new[:i]} for i, d in enumerate(new))
    print(f"library {args.library}: {len(full)} declarations; --limit {args.limit}")
    print(f"baseline (whole library read and ordered): {statistics.median(old_s):.2f} s")
    print(f"closure of the selection:                   {statistics.median(new_s):.2f} s")
    print(f"ratio baseline / closure: {statistics.median(old_s) / statistics.median(new_s):.1f}")
    print(f"closure run: {[d.id for d in new]} (every dep before its user: {closed})")
    print(f"baseline run: {[d.id for d in old]}")


if __name__ == "__main__":
    main()
