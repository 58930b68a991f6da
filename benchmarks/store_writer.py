"""Lean-result cache writes from worker threads: each thread its own transaction (the way the
cache wrote before issue 23.5, the baseline) against the store's one writer (`Store.writer`).

    .venv/bin/python benchmarks/store_writer.py --rows 4000 --threads 8 [--db sqlite:///x.db]

Both write the same number of distinct `lean_results` rows (plus one repeated key per ten, which
the first writer wins) into a fresh store of their own; prints rows/s, commits and the ratio.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from math2.lean.cache import ResultCache, result_row
from math2.lean.checker import CheckResult, Status
from math2.lean.identity import LeanIdentity
from math2.store import LeanResult, Store
from math2.store.upsert import insert_ignore

IDENT = LeanIdentity(kind="fake-repl", lean_version="4.19.0", mathlib_commit="bench")


def _keys(rows: int) -> list[str]:
    return [f"k{i if i % 10 else 0}" for i in range(rows)]


def _result(i: int) -> CheckResult:
    return CheckResult(id=str(i), status=Status.OK, passed=True, reason="ok " * 20)


def per_thread(store: Store, keys: list[str], threads: int) -> float:
    """The baseline: every put is a transaction of its own thread."""

    def put(ik: tuple[int, str]) -> None:
        values = result_row(ik[1], _result(ik[0]), IDENT)
        with store.session() as s:
            insert_ignore(s, LeanResult, values, keys=("key",))

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(put, enumerate(keys)))
    return time.perf_counter() - start


def one_writer(store: Store, keys: list[str], threads: int) -> float:
    """`ResultCache.put`: the row goes to the store's writer, which commits in batches."""
    cache = ResultCache(store, memory_items=0)
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda ik: cache.put(ik[1], _result(ik[0]), IDENT), enumerate(keys)))
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--db", help="a PostgreSQL URL (default: SQLite files in a temp folder)")
    args = ap.parse_args()
    keys = _keys(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        took = {}
        for name, fn in (("per-thread transactions", per_thread), ("one writer", one_writer)):
            url = args.db or f"sqlite:///{Path(tmp) / (name.replace(' ', '_') + '.db')}"
            store = Store(url)
            store.upgrade()
            took[name] = fn(store, keys, args.threads)
            with store.session() as s:
                n = s.query(LeanResult).count()
            commits = store.writer.commits if name == "one writer" else len(keys)
            print(
                f"{name:24s} {args.rows / took[name]:9.0f} puts/s  {took[name]:6.2f} s  "
                f"rows {n}  commits {commits}"
            )
            if args.db:
                with store.session() as s:
                    s.query(LeanResult).delete()
            store.close()
        base, new = took["per-thread transactions"], took["one writer"]
        print(f"one writer / per-thread: {base / new:.2f}x the throughput")


if __name__ == "__main__":
    main()
