"""Parse time of set.mm against the metamath program's `read set.mm`, in the same run.

    python benchmarks/import_setmm.py [--setmm PATH] [--repeat 5]

The C program is the anchor; the target (issue 5) is math2's parser within 3x of it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from math2.importers.metamath import parse


def time_metamath(path: Path) -> float:
    exe = shutil.which("metamath")
    if exe is None:
        raise SystemExit("the metamath program is not installed (Debian package metamath)")
    t0 = time.perf_counter()
    out = subprocess.run(
        [exe, "set scroll continuous", f'read "{path}"', "exit"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    elapsed = time.perf_counter() - t0
    assert "No errors were found" in out, out[-400:]
    return elapsed


def time_math2(path: Path) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    db = parse(path)
    return time.perf_counter() - t0, db.axioms, db.theorems


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--setmm", type=Path, default=Path("/usr/share/metamath/databases/set.mm"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"data: {args.setmm} ({args.setmm.stat().st_size / 1e6:.1f} MB)\n")
    mm, ours = [], []
    for _ in range(args.repeat):  # interleaved, so both see the same machine load
        mm.append(time_metamath(args.setmm))
        t, a, p = time_math2(args.setmm)
        ours.append(t)
    m_mm, m_ours = statistics.median(mm), statistics.median(ours)
    print("| parser | median s | min s | max s |")
    print("|---|---|---|---|")
    print(f"| metamath `read set.mm` (C) | {m_mm:.3f} | {min(mm):.3f} | {max(mm):.3f} |")
    print(f"| math2.importers.metamath | {m_ours:.3f} | {min(ours):.3f} | {max(ours):.3f} |")
    print(f"\nratio math2 / metamath: {m_ours / m_mm:.2f}x  ($a {a}, $p {p})")


if __name__ == "__main__":
    main()
