"""The declarations a Lean checkout's scan (`importers.mathlib.read_checkout`) keeps out of the
library's names (`allow_completion` false: private), as the math2 on PYTHONPATH reads them, and
the difference between two such readings (branch mend2: a private structure's fields).

    PYTHONPATH=/work/main/src python benchmarks/private_names.py scan CHECKOUT main.json
    PYTHONPATH=src            python benchmarks/private_names.py scan CHECKOUT branch.json
    python benchmarks/private_names.py diff main.json branch.json

`scan` writes {"records", "hidden", "fields"} (the count of records, the private names, the
field names) and prints the CPU it took; `diff` prints the counts of each and the names that
changed side. Each scan in its own process, so that two math2 checkouts can be compared; it
imports only `read_checkout`, which every math2 since the Lean scanner has.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def scan(checkout: Path, out: Path) -> None:
    from math2.importers.mathlib import read_checkout

    c0, load = time.process_time(), os.getloadavg()
    data = read_checkout(checkout)
    result = {
        "records": len(data.records),
        "hidden": sorted(r.name for r in data.records if not r.allow_completion),
        "fields": sorted(r.name for r in data.records if r.kind == "field"),
    }
    out.write_text(json.dumps(result))
    print(
        f"{out}: {result['records']} records, {len(result['hidden'])} private; "
        f"{time.process_time() - c0:.1f} s CPU, load average {load} -> {os.getloadavg()}"
    )


def diff(before: Path, after: Path, show: int) -> None:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    hid_a, hid_b = set(a["hidden"]), set(b["hidden"])
    print(f"| | {before.name} | {after.name} |\n|---|---|---|")
    print(f"| records | {a['records']:,} | {b['records']:,} |")
    print(f"| private (not a library name) | {len(hid_a):,} | {len(hid_b):,} |")
    moved = {"visible -> private": hid_b - hid_a, "private -> visible": hid_a - hid_b}
    for label, names in moved.items():
        print(f"| {label} | | {len(names)} |")
    for label, names in moved.items():
        if names:
            shown = ", ".join(sorted(names)[:show]) + (" …" if len(names) > show else "")
            print(f"\n{label}: {shown}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan", help="scan a checkout, write its private names")
    s.add_argument("checkout", type=Path, help="a Lean checkout (Mathlib at the pin)")
    s.add_argument("out", type=Path, help="the JSON file to write")
    d = sub.add_parser("diff", help="compare two scans")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument("--show", type=int, default=40, help="names listed per side")
    args = ap.parse_args()
    if args.command == "scan":
        scan(args.checkout, args.out)
    else:
        diff(args.before, args.after, args.show)


if __name__ == "__main__":
    main()
