"""Wall and CPU time of `math2 search` from the command line, cold and warm, over a store's
indexes.

    python benchmarks/search_cli.py --store /path/to/store-folder [--runs 10] [--before SRC]

The folder holds math2.db and `.math2/index/` (as `math2 build` leaves them, here with all of
Mathlib and set.mm). Each run is a new `math2 search` process (what a user types), timed from
start to exit:

- cold: the index files are dropped from the page cache first (`os.posix_fadvise(...,
  POSIX_FADV_DONTNEED)` on every file under the index folder), so the process reads from disk
  what it needs; Python's own modules stay cached, as on any machine that ran Python before;
- warm: the same command again right after, the files in the page cache.

Four scopes: the default (Mathlib, ordered by the learned ranker where its index has one),
`--fusion` (Mathlib, the hand-tuned fusion's order), `--library setmm`, and `--library all`
(every built index, merged); `--scopes` picks some. Queries are fixed below (a title, a
description, a Lean statement). The baselines, in the same run, are `math2 --version` (the
process start, no command's imports) and `math2 search --help` (the search command's imports,
no index read), so the differences are what importing and searching cost. With `--before SRC`
(the `src/` folder of another checkout, e.g. `git archive BASE src | tar -x -C /tmp/base`),
every row is measured for it too, interleaved, so a change is a ratio within one run. Each
process is `python -m math2 …` with `PYTHONPATH` set to the `src/` measured. With `--bytecode`,
Python's compiled modules are kept (in a folder of their own under the system's temporary
folder, `PYTHONPYCACHEPREFIX`) even where the environment sets `PYTHONDONTWRITEBYTECODE` (this
machine does): an installed math2 has its `.pyc` files, and without them each process compiles
math2's modules again. CPU time is the child's user + system time (what the machine spends,
which the load of other jobs inflates far less than wall time); the load average is printed
before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "infinitely many primes",
    "a continuous function on a compact set attains its maximum",
    "‖x + y‖ ≤ ‖x‖ + ‖y‖",
]
SCOPES = {"default (mathlib)": [], "fusion (mathlib)": ["--fusion"], "setmm": ["--library",
          "setmm"], "all": ["--library", "all"]}  # fmt: skip


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


BASELINES = {"baseline: `math2 --version`": ["--version"], "baseline: `math2 search --help`":
             ["search", "--help"]}  # fmt: skip


SRC = Path(__file__).resolve().parents[1] / "src"


PYC: dict[str, str] = {}  # --bytecode: src/ → the folder its compiled modules are kept in


def run(store: Path, args: list[str], src: Path = SRC) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one `math2 …` process over STORE (named
    by `MATH2_DB_URL`, so that the command line is what a user types: `math2 search …`)."""
    cmd = [sys.executable, "-m", "math2", *args]
    env = os.environ | {"PYTHONPATH": str(src), "MATH2_DB_URL": f"sqlite:///{store / 'math2.db'}"}
    if str(src) in PYC:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYC[str(src)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=store, env=env, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dt, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5, help="runs per query, scope and state")
    ap.add_argument("--before", type=Path, help="the src/ folder of a checkout to compare with")
    ap.add_argument("--bytecode", action="store_true", help="keep compiled modules (.pyc)")
    ap.add_argument("--scopes", nargs="+", choices=list(SCOPES), default=list(SCOPES))
    args = ap.parse_args()
    index = args.store / ".math2" / "index"
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()} (shared with other jobs: upper bounds)")  # fmt: skip
    for lib in sorted(p.name for p in index.iterdir() if (p / "meta.json").exists()):
        size = sum(f.stat().st_size for f in (index / lib).rglob("*") if f.is_file())
        print(f"index {lib}: {size / 2**20:.0f} MiB on disk")
    print(f"load average before: {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("\n| command | cold wall p50 s | cold CPU p50 s | cold CPU mean s | cold CPU max s "
          "| warm wall p50 s | warm CPU p50 s | warm CPU mean s | warm CPU max s |\n"
          "|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    rows = {k: [v] * len(QUERIES) for k, v in BASELINES.items()}
    rows |= {k: [["search", q, *SCOPES[k]] for q in QUERIES] for k in args.scopes}
    srcs = {"": SRC} | ({" (before)": args.before} if args.before else {})
    for src in srcs.values() if args.bytecode else ():
        PYC[str(src)] = tempfile.mkdtemp(suffix="-pyc")
        run(args.store, ["search", "--help"], src)  # compiles them, untimed
    for label, commands in rows.items():
        cold: dict[str, list] = {t: [] for t in srcs}
        warm: dict[str, list] = {t: [] for t in srcs}
        for _ in range(args.runs):
            for cmd in commands:
                for tag, src in srcs.items():
                    drop_cache(index)
                    cold[tag].append(run(args.store, cmd, src))
                    warm[tag].append(run(args.store, cmd, src))
        for tag in srcs:
            c, w = cold[tag], warm[tag]
            cells = []
            for runs in (c, w):
                cpu = [x for _, x in runs]
                cells.append(f"{statistics.median(x for x, _ in runs):.2f} "
                             f"| {statistics.median(cpu):.3f} | {statistics.mean(cpu):.3f} "
                             f"| {max(cpu):.2f}")  # fmt: skip
            print(f"| {label}{tag} | {cells[0]} | {cells[1]} |", flush=True)
    print(f"load average after: {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
