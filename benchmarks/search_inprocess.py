"""What one query costs the command line's own call, in one process: `Searcher.search` over a
Searcher without a store (the index's names not preloaded: what `math2 search` does), at
several k, wall and CPU time per call, warm (after a first query opened the index's parts).

    python benchmarks/search_inprocess.py --store /path/to/store-folder [--k 10 100] \
        [--queries 200] [--before SRC] [--code LABEL=SRC[@STORE] ...] [--rounds 3] [--only-codes]

The queries are every dev set's (`benchmarks/devsets/*.yaml`), a fixed sample. With `--before
SRC` (the `src/` folder of another checkout: `git archive BASE src | tar -x -C /tmp/base`),
the same measurement (`retrieval_report.cli_latency`) runs for that code too, interleaved by k
with this checkout's, so a change is a ratio within one run; each k and code runs in a fresh
child process (a process's caches, warmed by one k's queries, would favour the next). `--code`
names more codes, each with its own store where its index differs (an older code reads only
the index its own `math2 index build` wrote); the order rotates round by round, so each code
runs first, middle and last. CPU is `time.process_time` (user + system of the process); the
load average is printed beside.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from retrieval_report import cli_latency

DEVSETS = Path(__file__).parent / "devsets"
SRC = Path(__file__).resolve().parents[1] / "src"


def queries(n: int) -> list[str]:
    every = [
        it["q"] for f in sorted(DEVSETS.glob("*.yaml")) for it in yaml.safe_load(f.read_text())
    ]
    return every[:: max(1, len(every) // n)][:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--library", default="mathlib")
    ap.add_argument("--k", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--before", type=Path, help="the src/ folder of a checkout to compare with")
    ap.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="LABEL=SRC[@STORE]",
        help="another code to measure (its src/ folder, and its store if not --store)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="repeat, alternating which runs first")
    ap.add_argument(
        "--only-codes",
        action="store_true",
        help="measure only --before and --code, not this checkout",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    root = args.store / ".math2" / "index"
    qs = queries(args.queries)
    if args.child:  # one k, as JSON, for the parent
        print(json.dumps(cli_latency(root, args.library, qs, args.k[0])))
        return
    print(f"{len(qs)} queries, {os.cpu_count()} CPUs, load average before "
          f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    print("| code | k | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms | CPU mean ms |")
    print("|---|---|---|---|---|---|---|")
    seen: list[int] = []
    codes = {} if args.only_codes else {"this checkout": (SRC, args.store)}
    if args.before:
        codes[f"before ({args.before})"] = (args.before, args.store)
    for spec in args.code:
        label, sep, where = spec.partition("=")
        src, _, store = where.partition("@")
        if not sep or not label or not src:
            ap.error(f"--code {spec!r}: expected LABEL=SRC or LABEL=SRC@STORE")
        codes[label] = (Path(src), Path(store) if store else args.store)
    for k in [k for _ in range(args.rounds) for k in args.k]:
        rows = {}
        order = list(codes.items())
        turn = seen.count(k) % len(order)
        order = order[turn:] + order[:turn]  # rotate which code runs first, round by round
        seen.append(k)
        for label, (src, store) in order:  # each in a fresh process: no warmed cache
            cmd = [sys.executable, __file__, "--store", str(store), "--library",
                   args.library, "--k", str(k), "--queries", str(args.queries),
                   "--child"]  # fmt: skip
            env = os.environ | {"PYTHONPATH": str(src)}
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            rows[label] = json.loads(out.stdout)
        for label, m in rows.items():
            print(f"| {label} | {k} | {m['wall p50']:.1f} | {m['wall p95']:.1f} "
                  f"| {m['cpu p50']:.1f} | {m['cpu p95']:.1f} | {m['cpu mean']:.1f} |",
                  flush=True)  # fmt: skip
    print(f"load average after: {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
