"""Statement hygiene on the real benchmarks: what is accepted, what is refused and why, and how
fast.

    python benchmarks/hygiene.py [--data DIR] [--repeat 5]

Every item of the benchmark files in DIR (default: the `fate-m` data set, `math2 data fetch fate-m`;
miniF2F and ProofNet are read when the folder the user names has them) is turned into code the
way `math2 lean check` reads it (header + statement, `sorry` after a trailing `:=`/`:= by`) and
judged by `check_code` in statement mode at the benchmark trust level (their context was written
by people), with the item's expected name where the benchmark gives one; then the fixture sets of
tests/lean/meaning_corpus.py (column-0 continuations, helper lemmas, local notation, a multi-part
item) and the time to refuse a 10 MB item. The same items at the generated level (a model's
block) are counted too, to show what the stricter level refuses.
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

from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.statement import benchmark_code

ROOT = Path(__file__).resolve().parents[1]
BENCH = ContextTrust.BENCHMARK
sys.path.insert(0, str(ROOT))
from tests.lean.meaning_corpus import BENCHMARK_OK, MULTI_PART  # noqa: E402


def load(data: Path) -> list[tuple[str, str, str, str | None]]:
    """(file, item id, code, expected name) for every benchmark item."""
    out = []
    for fname in ("minif2f.jsonl", "proofnet.jsonl"):
        if not (data / fname).exists():
            continue
        for line in (data / fname).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                code = benchmark_code(row.get("header", ""), row["formal_statement"])
                out.append((fname, row["name"], code, row["name"]))
    if (data / "fate_m.json").exists():
        for row in json.loads((data / "fate_m.json").read_text(encoding="utf-8")):
            out.append(("fate_m.json", str(row["id"]), row["formal_statement"], None))
    if not out:
        raise SystemExit(
            f"no benchmark file in {data} (fate_m.json, minif2f.jsonl, proofnet.jsonl)"
        )
    for case, code in BENCHMARK_OK.items():
        out.append(("fixtures", case, code, "foo"))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, help="default: the fate-m data set (math2.data)")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    if args.data is None:
        from math2.config import load_settings
        from math2.data import locate

        args.data = locate(load_settings(), "fate-m")
    items = load(args.data.resolve())

    per_file: dict[str, list[int]] = {}
    refusals = []
    for fname, iid, code, name in items:
        report = check_code(code, name=name, trust=BENCH)
        acc = per_file.setdefault(fname, [0, 0, 0])
        acc[0] += 1
        acc[2] += check_code(code, name=name).ok
        if report.ok:
            acc[1] += 1
        else:
            rules = sorted({v.rule for v in report.violations})
            refusals.append((fname, iid, ", ".join(rules), report.violations[0].detail))

    cpu, wall = [], []
    for _ in range(args.repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        for _, _, code, name in items:
            check_code(code, name=name, trust=BENCH)
        cpu.append(len(items) / (time.process_time() - c0))
        wall.append(len(items) / (time.perf_counter() - w0))

    print(f"Data: {args.data.resolve()} ({len(items)} items)")
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}\n"
    )
    multi = check_code(MULTI_PART, parts=["foo_part1", "foo_part2"], trust=BENCH)
    per_file["fixtures: multi-part"] = [1, int(multi.ok), 0]
    big = "import Mathlib\ntheorem foo : True := by sorry\n" + "-- padding\n" * 1_000_000
    t0 = time.perf_counter()
    refused = not check_code(big, name="foo", trust=BENCH).ok
    big_s = time.perf_counter() - t0
    print("| file | items | accepted (benchmark) | refused | accepted (generated) |")
    print("|---|---|---|---|---|")
    for fname, (n, ok, gen) in per_file.items():
        print(f"| {fname} | {n} | {ok} | {n - ok} | {gen} |")
    print(f"\n10 MB item refused: {refused}, in {big_s * 1000:.1f} ms")
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
