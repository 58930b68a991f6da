"""Ray's CPU cost against the local executor's, for two source trees in one session: pairs of
`scale_ray.py --job formalize` CPU runs (each a local and a Ray run of N and of 3N items), the
trees alternating from pair to pair and local and Ray alternating inside them, so that neither
tree nor executor always gets the quieter minutes of a shared machine.

    git archive main | tar -x -C /tmp/base        # a tree: its src/ and benchmarks/
    cp benchmarks/*.py /tmp/base/benchmarks/      # the same benchmark files in both trees
    python benchmarks/ray_ab.py --trees /tmp/base /tmp/branch --pairs 5 --items 100 \\
        --pg-url $MATH2_TEST_PG_URL --log-dir /tmp/ab

For each run of each tree: CPU per item ((CPU(3N) − CPU(N)) / 2N, every process of the run, as
`scale_ray.py` counts it), the fixed CPU (CPU(N) − N × per item), Ray's extra per item over the
local run of the same pair, and the 1-minute load before and after; then the medians per tree.
Each run's full output (CPU by role) is kept under `--log-dir`.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

LINE = re.compile(r"repeat \d+, (local|ray), (\d+) items, .* CPU ([\d.]+) s, load")


def one(tree: Path, a: argparse.Namespace, rep: int, log: Path) -> dict[tuple[str, int], float]:
    """One pair of `tree`: CPU seconds by (executor, items)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    cmd = [
        sys.executable,
        str(tree / "benchmarks" / "scale_ray.py"),
        "--pg-url", a.pg_url, "--job", "formalize", "--items", str(a.items), "--repeats", "1",
        "--first-repeat", str(rep), "--skip-throughput",
        "--model-latency", str(a.model_latency), "--concurrency", str(a.concurrency),
    ]  # fmt: skip
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    log.write_text(out.stdout + out.stderr)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: scale_ray.py exited {out.returncode}; see {log}")
    cpu: dict[tuple[str, int], float] = {}
    for m in list(LINE.finditer(out.stdout))[2:]:  # the first two: the untimed warm-up pair
        cpu[m.group(1), int(m.group(2))] = float(m.group(3))
    if len(cpu) != 4:
        raise SystemExit(f"{tree}: found {sorted(cpu)} runs, not 4; see {log}")
    return cpu


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trees", nargs=2, type=Path, required=True, metavar=("BASE", "BRANCH"))
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--first-pair", type=int, default=0, help="number the pairs from here")
    p.add_argument("--items", type=int, default=100)
    p.add_argument("--model-latency", type=float, default=0.05)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--pg-url", default=os.environ.get("MATH2_TEST_PG_URL"))
    p.add_argument("--log-dir", type=Path, default=Path("ray_ab_logs"))
    a = p.parse_args()
    if not a.pg_url:
        p.error("give --pg-url (or MATH2_TEST_PG_URL)")
    a.log_dir.mkdir(parents=True, exist_ok=True)
    n = a.items
    rows: dict[str, list[tuple[float, float, float]]] = {str(t): [] for t in a.trees}
    print("| pair | tree | local ms/item | Ray ms/item | Ray extra ms/item | Ray fixed s "
          "| local fixed s | wall s | load before → after | UTC |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i in range(a.first_pair, a.first_pair + a.pairs):
        order = a.trees if i % 2 == 0 else a.trees[::-1]
        for tree in order:
            load0, t0 = os.getloadavg()[0], time.monotonic()
            start = time.strftime("%H:%M", time.gmtime())
            cpu = one(tree, a, i, a.log_dir / f"pair{i}-{tree.name}.txt")
            wall, load1 = time.monotonic() - t0, os.getloadavg()[0]
            per = {k: (cpu[k, 3 * n] - cpu[k, n]) / (2 * n) for k in ("local", "ray")}
            fixed = {k: cpu[k, n] - n * per[k] for k in ("local", "ray")}
            extra = per["ray"] - per["local"]
            rows[str(tree)].append((extra, fixed["ray"], per["ray"]))
            print(
                f"| {i + 1} | {tree.name} | {per['local'] * 1000:.2f} | {per['ray'] * 1000:.2f} "
                f"| {extra * 1000:.2f} | {fixed['ray']:.2f} | {fixed['local']:.2f} | {wall:.0f} "
                f"| {load0:.1f} → {load1:.1f} | {start} |",
                flush=True,
            )
    print()
    for tree, rs in rows.items():
        extra, fixed, ray = (statistics.median(c) for c in zip(*rs, strict=True))
        print(
            f"{Path(tree).name}: medians of {len(rs)}: Ray extra {extra * 1000:.2f} ms/item, "
            f"Ray {ray * 1000:.2f} ms/item, Ray fixed {fixed:.2f} s"
        )


if __name__ == "__main__":
    main()
