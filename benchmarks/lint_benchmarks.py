"""Run the deterministic lints on the human formalizations of the benchmarks; print every flag.

    .venv/bin/python benchmarks/lint_benchmarks.py BENCHMARKS_DIR [--json out.json]

Reads minif2f.jsonl and proofnet.jsonl (informal_prefix, formal_statement) and fate_m.json
(informal_statement, formal_statement). Prints one line per flag (benchmark, item, lint,
finding) and the counts per lint; the flags are then read by a person and classed in
docs/benchmarks.md. Only item names and formal text are printed, never the informal text.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from math2.checks import Pair
from math2.checks.lints import lint_all
from math2.store.work import Verdict


def load(folder: Path) -> list[tuple[str, Pair]]:
    out = []
    for bench in ("minif2f", "proofnet"):
        for line in (folder / f"{bench}.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            informal = r["informal_prefix"].strip().removeprefix("/--").removesuffix("-/")
            out.append((bench, Pair(id=r["name"], informal=informal, formal=r["formal_statement"])))
    for r in json.loads((folder / "fate_m.json").read_text(encoding="utf-8")):
        out.append(
            (
                "fate_m",
                Pair(
                    id=str(r["id"]), informal=r["informal_statement"], formal=r["formal_statement"]
                ),
            )
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    pairs = load(args.folder)
    flags, counts, errors = [], Counter(), Counter()
    for bench, pair in pairs:
        for o in lint_all(pair):
            if o.verdict is Verdict.FAIL:
                for f in o.evidence["findings"]:
                    flags.append({"bench": bench, "id": pair.id, "lint": o.check, "finding": f})
                    counts[o.check] += 1
            elif o.verdict is Verdict.ERROR:
                errors[o.check] += 1
                flags.append(
                    {
                        "bench": bench,
                        "id": pair.id,
                        "lint": o.check,
                        "finding": "ERROR " + o.evidence["reason"],
                    }
                )
    for f in flags:
        print(f"{f['bench']}\t{f['id']}\t{f['lint']}\t{f['finding']}")
    print(f"# pairs {len(pairs)}; flags {dict(counts)}; errors {dict(errors)}")
    if args.json:
        args.json.write_text(json.dumps(flags, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
