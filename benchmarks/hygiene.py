"""Statement hygiene on the real benchmarks: acceptance, every refusal with its rule, and speed.

    python benchmarks/hygiene.py [--data ../shared/data/benchmarks] [--repeat 5]

Each miniF2F / ProofNet item is its header + formal statement + ` sorry` (a prover's prompt ends
in `:=` or `:= by`); each FATE-M item is its formal statement as published. Prints a Markdown
table of refusals and the throughput (best of --repeat passes over all items, one core).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from math2.lean.hygiene import check_code


def items(data: Path) -> list[tuple[str, str, str]]:
    out = []
    for name in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            it = json.loads(line)
            stmt = it["formal_statement"].rstrip()
            if stmt.endswith((":=", ":= by")):
                stmt += " sorry"
            out.append((name.split(".")[0], it["name"], it["header"] + stmt))
    for it in json.loads((data / "fate_m.json").read_text(encoding="utf-8")):
        out.append(("fate_m", str(it["id"]), it["formal_statement"]))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument(
        "--data", type=Path, default=Path(__file__).parents[2] / "shared/data/benchmarks"
    )
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    its = items(args.data)
    refused = []
    per_set: dict[str, list[int]] = {}
    for bench, name, code in its:
        r = check_code(code)
        per_set.setdefault(bench, [0, 0])[0] += 1
        if not r.ok:
            per_set[bench][1] += 1
            refused.append((bench, name, r.violations[0].rule, r.reason))
    best = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        for _, _, code in its:
            check_code(code)
        best = min(best, time.perf_counter() - t)
    print("| benchmark | items | accepted | refused |\n|---|---|---|---|")
    for bench, (n, bad) in per_set.items():
        print(f"| {bench} | {n} | {n - bad} | {bad} |")
    print("\n| benchmark | item | rule | reason |\n|---|---|---|---|")
    for bench, name, rule, reason in refused:
        print(f"| {bench} | {name} | {rule} | {reason[:120].replace('|', '/')} |")
    chars = sum(len(c) for _, _, c in its)
    print(
        f"\n{len(its)} items ({chars / len(its):.0f} characters on average): "
        f"{len(its) / best:.0f} statements/s (best of {args.repeat}, one core)"
    )


if __name__ == "__main__":
    main()
