"""Wall time of `math2 search` from the command line, cold and warm, over a store's indexes.

    python benchmarks/search_cli.py --store /path/to/store-folder [--runs 10]

The folder holds math2.db and `.math2/index/` (as `math2 build` leaves them, here with all of
Mathlib and set.mm). Each run is a new `math2 search` process (what a user types), timed from
start to exit:

- cold: the index files are dropped from the page cache first (`os.posix_fadvise(...,
  POSIX_FADV_DONTNEED)` on every file under the index folder), so the process reads from disk
  what it needs; Python's own modules stay cached, as on any machine that ran Python before;
- warm: the same command again right after, the files in the page cache.

Three scopes: the default (Mathlib), `--library setmm`, and `--library all` (every built
index, merged). Queries are fixed below (a title, a description, a Lean statement). The
baseline, in the same run, is `math2 search --help`: the same process start and imports (every
command module), no index read, so the difference is what searching costs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = [
    "infinitely many primes",
    "a continuous function on a compact set attains its maximum",
    "‖x + y‖ ≤ ‖x‖ + ‖y‖",
]
SCOPES = {"default (mathlib)": [], "setmm": ["--library", "setmm"], "all": ["--library", "all"]}


def drop_cache(folder: Path) -> None:
    """Ask the kernel to forget the pages of every file under `folder`."""
    for p in folder.rglob("*"):
        if p.is_file():
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def run(store: Path, query: str | None, scope: list[str]) -> float:
    math2 = Path(sys.executable).with_name("math2")
    args = [query, *scope] if query is not None else ["--help"]
    cmd = [str(math2), "--db", f"sqlite:///{store / 'math2.db'}", "search", *args]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=store, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5, help="runs per query, scope and state")
    args = ap.parse_args()
    index = args.store / ".math2" / "index"
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()} (shared with other jobs: upper bounds)")  # fmt: skip
    for lib in sorted(p.name for p in index.iterdir() if (p / "meta.json").exists()):
        size = sum(f.stat().st_size for f in (index / lib).rglob("*") if f.is_file())
        print(f"index {lib}: {size / 2**20:.0f} MiB on disk")
    print("\n| scope | cold p50 s | cold max s | warm p50 s | warm max s |")
    print("|---|---|---|---|---|")
    for label, scope in {"baseline: `math2 search --help`": [], **SCOPES}.items():
        cold, warm = [], []
        for _ in range(args.runs):
            for q in QUERIES if not label.startswith("baseline") else [None] * len(QUERIES):
                drop_cache(index)
                cold.append(run(args.store, q, scope))
                warm.append(run(args.store, q, scope))
        print(f"| {label} | {statistics.median(cold):.2f} | {max(cold):.2f} "
              f"| {statistics.median(warm):.2f} | {max(warm):.2f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
