"""Where `math2 search`'s start goes before it reads the index: the CPU of each import it
makes, in the order it makes them, each process fresh (issue 45 §6).

    python benchmarks/search_imports.py [--runs 7] [--src SRC ...] [--bytecode]

Each run is a new interpreter that imports the groups below one after another, timing each
with `time.process_time` (user + system CPU of the process); a group's figure is what it adds
to those before it (the standard library modules an earlier one imported are not counted
again). Medians over `--runs`, the codes (`--src`: a checkout's `src/`, this one's by default)
alternating run by run. `--bytecode` keeps compiled modules (`PYTHONPYCACHEPREFIX` in the
system's temporary folder), as an installed math2 has them. BLAS threads are pinned to one as
`math2 search` pins them (`math2.cli.main`). The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# What `math2 search` imports, grouped by who needs it (a module two groups import counts in the
# first: the order is the command's, but numpy, which it imports with the index, comes early).
GROUPS = {
    "asyncio (pydantic-settings' main)": ["asyncio"],
    "numpy": ["numpy"],
    "pydantic (BaseModel)": ["pydantic.main"],
    "importlib.metadata (pydantic's plugin loader)": ["importlib.metadata"],
    "pydantic-settings (the rest)": ["pydantic_settings"],
    "math2.config (the settings' models)": ["math2.config"],
    "typer": ["typer"],
    "rich.console": ["rich.console"],
    "math2.cli (the app, the search command)": ["math2.cli._common", "math2.cli.search"],
    "math2.retrieval (searcher, index, parts)": ["math2.retrieval.searcher"],
    "math2.retrieval (ranker, features)": ["math2.retrieval.ranker"],
}
OUTSIDE = "the rest: the interpreter's start (site), the child's own code, its exit"
_CHILD = r"""
import importlib, json, sys, time
out = {}
for label, modules in json.loads(sys.argv[1]).items():
    c0 = time.process_time()
    for m in modules:
        importlib.import_module(m)
    out[label] = 1000 * (time.process_time() - c0)
print(json.dumps(out))
"""


def one(src: Path, env: dict[str, str]) -> dict[str, float]:
    t0 = os.times()
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(GROUPS)], env=env | {
        "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True)  # fmt: skip
    t1 = os.times()
    got: dict[str, float] = json.loads(out.stdout)
    cpu = 1000 * ((t1.children_user - t0.children_user) + (t1.children_system - t0.children_system))
    got[OUTSIDE] = cpu - sum(got.values())
    got["whole process"] = cpu
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--src", type=Path, nargs="+", default=[SRC])
    ap.add_argument("--bytecode", action="store_true", help="keep compiled modules (.pyc)")
    args = ap.parse_args()
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[var] = "1"
    if args.bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "math2-search-imports")
        for src in args.src:
            one(src, env)  # writes the .pyc files
    print(f"load average before {'/'.join(f'{x:.1f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%H:%M:%S', time.gmtime())} UTC")  # fmt: skip
    runs: dict[Path, list[dict[str, float]]] = {src: [] for src in args.src}
    for i in range(args.runs):
        order = args.src[i % len(args.src) :] + args.src[: i % len(args.src)]
        for src in order:
            runs[src].append(one(src, env))
    print("| imports | " + " | ".join(f"CPU ms, median ({s})" for s in args.src) + " |")
    print("|---|" + "---|" * len(args.src))
    for label in [*GROUPS, OUTSIDE, "whole process"]:
        cells = [statistics.median(r[label] for r in runs[s]) for s in args.src]
        print(f"| {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    print(f"load average after {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
