"""The Lean source scanner over a real Mathlib checkout: files/s, declarations found, and the
counts set against the numbers K06 publishes.

    python benchmarks/scan_mathlib.py --mathlib /path/to/mathlib4

The baseline in the same run is a plain read of every file (the I/O and UTF-8 decoding floor).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from collections import Counter
from pathlib import Path

from math2.importers.lean_source import lean_files, scan_file

K06 = {
    "named theorems and definitions (stats page)": 430_853,
    "constants a user can complete (allowCompletion)": 483_112,
    "all constants": 797_294,
    "constants with a docstring": 115_876,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mathlib", type=Path, default=os.environ.get("MATH2_DATA__MATHLIB_DIR"))
    args = ap.parse_args()
    if args.mathlib is None:
        raise SystemExit("give --mathlib DIR (a Mathlib checkout) or MATH2_DATA__MATHLIB_DIR")
    root = args.mathlib
    files = list(lean_files(root / "Mathlib"))
    commit = (
        subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "unknown"
    )
    t0 = time.perf_counter()
    size = sum(len(p.read_bytes().decode("utf-8")) for p in files)
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    kinds: Counter[str] = Counter()
    named = doc = dep = to_add = main = stacks = 0
    for p in files:
        f = scan_file(root, p)
        main += len(f.main_results)
        for d in f.declarations:
            kinds[d.kind] += 1
            named += d.name is not None
            doc += d.docstring is not None
            dep += d.deprecated_since is not None
            stacks += bool(d.stacks)
            to_add += any("to_additive" in a for a in d.attributes)
    scan_s = time.perf_counter() - t0
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs (one used), "
        f"Python {platform.python_version()}"
    )
    print(
        f"data: Mathlib checkout at {commit[:12]}, {len(files)} files, {size / 1e6:.1f} M chars\n"
    )
    print("| pass | seconds | files/s |")
    print("|---|---|---|")
    print(f"| read + decode only (baseline) | {read_s:.2f} | {len(files) / read_s:.0f} |")
    print(f"| full scan | {scan_s:.2f} | {len(files) / scan_s:.0f} |")
    total = sum(kinds.values())
    print(
        f"\ndeclarations: {total} ({named} named); with docstring {doc}; deprecated {dep}; "
        f"with @[stacks] {stacks}; @[to_additive] {to_add}; module-doc main-result names {main}"
    )
    print("by keyword: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    named_thm_def = sum(v for k, v in kinds.items() if k not in ("example", "instance", "alias"))
    print("\n| K06 count | K06 | scanner | ratio | note |")
    print("|---|---|---|---|---|")
    rows = [
        (
            "named theorems and definitions (stats page)",
            named_thm_def + to_add,
            "written theorems/lemmas/defs/structures… plus one @[to_additive] twin each",
        ),
        (
            "constants a user can complete (allowCompletion)",
            named + to_add,
            "every named declaration plus to_additive twins; no auxiliary or generated lemmas",
        ),
        ("constants with a docstring", doc, "doc comments in the source"),
    ]
    for label, ours, note in rows:
        print(f"| {label} | {K06[label]} | {ours} | {ours / K06[label]:.2f} | {note} |")


if __name__ == "__main__":
    main()
