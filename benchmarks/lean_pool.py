"""Throughput and memory of the Lean pool against the fake REPL (1 s header, 50 ms per check).

    python benchmarks/lean_pool.py [--checks 400] [--workers 1,2,4] [--memory-checks 10000]

Throughput goes through the whole checker (hygiene, pool, verdict; no cache) and is compared
with the ideal W / 0.05 checks per second. Memory: RSS and traced Python allocations of this
process, sampled over a long run, must stay flat.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import sys
import time
import tracemalloc

import psutil

from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Mode
from math2.lean.pool import PoolConfig

HEADER_S = 1.0
CHECK_S = 0.05
FAKE = [
    sys.executable,
    "-m",
    "math2.lean.testing.fake_repl",
    "--header-delay",
    str(HEADER_S),
    "--check-delay",
    str(CHECK_S),
]


def items(n: int, offset: int = 0):
    for i in range(offset, offset + n):
        yield CheckItem(
            id=str(i),
            code=f"import Mathlib\ntheorem t{i} (x : ℕ) : x + 0 = x := by sorry",
            name=f"t{i}",
            mode=Mode.STATEMENT,
        )


async def throughput(workers: int, n: int) -> tuple[float, float, int]:
    backend = ReplBackend.from_config(
        PoolConfig(
            argv=FAKE, size=workers, timeout_s=30, recycle_after_uses=10**9, memory_limit_mb=None
        )
    )
    checker = LeanChecker(backend, timeout_s=30)
    t_warm = time.perf_counter()
    await backend.pool.start(["import Mathlib"])
    warm = time.perf_counter() - t_warm
    t0 = time.perf_counter()
    passed = 0
    async for r in checker.check_many(items(n), concurrency=workers * 2):
        passed += r.passed
    elapsed = time.perf_counter() - t0
    await backend.close()
    return n / elapsed, warm, passed


async def memory(n: int, workers: int, samples: int = 10) -> list[tuple[int, float, float]]:
    backend = ReplBackend.from_config(
        PoolConfig(
            argv=FAKE, size=workers, timeout_s=30, recycle_after_uses=10**9, memory_limit_mb=None
        )
    )
    checker = LeanChecker(backend, timeout_s=30)
    await backend.pool.start(["import Mathlib"])
    me = psutil.Process(os.getpid())
    tracemalloc.start()
    out = []
    step = n // samples
    done = 0
    for k in range(samples):
        async for _ in checker.check_many(items(step, offset=k * step), concurrency=workers * 2):
            done += 1
        gc.collect()
        traced, _ = tracemalloc.get_traced_memory()
        out.append((done, me.memory_info().rss / 2**20, traced / 2**20))
    tracemalloc.stop()
    await backend.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checks", type=int, default=400)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--memory-checks", type=int, default=10_000)
    ap.add_argument("--memory-workers", type=int, default=4)
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"fake REPL: header {HEADER_S} s, {CHECK_S * 1000:.0f} ms per check\n")
    print("| workers | checks | checks/s | ideal W/0.05 | ratio | pre-warm s | passed |")
    print("|---|---|---|---|---|---|---|")
    for w in (int(x) for x in args.workers.split(",")):
        rate, warm, passed = asyncio.run(throughput(w, args.checks * w))
        ideal = w / CHECK_S
        print(
            f"| {w} | {args.checks * w} | {rate:.1f} | {ideal:.0f} | {rate / ideal:.1%} | "
            f"{warm:.2f} | {passed} |"
        )
    if args.memory_checks:
        print(f"\nmemory over {args.memory_checks} checks, {args.memory_workers} workers:\n")
        print("| checks done | RSS MiB | traced Python MiB |")
        print("|---|---|---|")
        for done, rss, traced in asyncio.run(memory(args.memory_checks, args.memory_workers)):
            print(f"| {done} | {rss:.1f} | {traced:.2f} |")


if __name__ == "__main__":
    main()
