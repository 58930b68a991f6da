"""Statement hygiene on the real benchmarks: what is accepted, what is refused and why, and how
fast.

    python benchmarks/hygiene.py [--data DIR] [--repeat 5]   (DIR: minif2f.jsonl, proofnet.jsonl,
    fate_m.json; default $MATH2_BENCHMARKS)

Every item of miniF2F (jsonl), ProofNet (jsonl) and FATE-M (json) is turned into code the way
`math2 lean check` reads it (header + statement, `sorry` after a trailing `:=`/`:= by`) and judged
by `check_code` in statement mode, with the item's expected name where the benchmark gives one.
Prints a markdown table of acceptance per file, every refusal with its rules, and the speed
(statements per second of CPU time and of wall time, best and median of --repeat passes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from math2.lean.hygiene import check_code
from math2.lean.statement import benchmark_code

DEFAULT_DATA = Path(
    os.environ.get("MATH2_BENCHMARKS", "benchmarks-data")
)  # miniF2F, ProofNet, FATE-M


def load(data: Path) -> list[tuple[str, str, str, str | None]]:
    """(file, item id, code, expected name) for every benchmark item."""
    out = []
    for fname in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (data / fname).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                code = benchmark_code(row.get("header", ""), row["formal_statement"])
                out.append((fname, row["name"], code, row["name"]))
    for row in json.loads((data / "fate_m.json").read_text(encoding="utf-8")):
        out.append(("fate_m.json", str(row["id"]), row["formal_statement"], None))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    items = load(args.data.resolve())

    per_file: dict[str, list[int]] = {}
    refusals = []
    for fname, iid, code, name in items:
        report = check_code(code, name=name)
        acc = per_file.setdefault(fname, [0, 0])
        acc[0] += 1
        if report.ok:
            acc[1] += 1
        else:
            rules = sorted({v.rule for v in report.violations})
            refusals.append((fname, iid, ", ".join(rules), report.violations[0].detail))

    cpu, wall = [], []
    for _ in range(args.repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        for _, _, code, name in items:
            check_code(code, name=name)
        cpu.append(len(items) / (time.process_time() - c0))
        wall.append(len(items) / (time.perf_counter() - w0))

    print(f"Data: {args.data.resolve()} ({len(items)} items)")
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| file | items | accepted | refused |\n|---|---|---|---|")
    for fname, (n, ok) in per_file.items():
        print(f"| {fname} | {n} | {ok} | {n - ok} |")
    print("\n| file | item | rules | first reason |\n|---|---|---|---|")
    for fname, iid, rules, detail in refusals:
        print(f"| {fname} | {iid} | {rules} | {detail.replace('|', '/')} |")
    print(
        f"\nSpeed over {args.repeat} passes of {len(items)} statements: "
        f"CPU best {max(cpu):,.0f}/s, median {statistics.median(cpu):,.0f}/s; "
        f"wall best {max(wall):,.0f}/s, median {statistics.median(wall):,.0f}/s"
    )


if __name__ == "__main__":
    main()
