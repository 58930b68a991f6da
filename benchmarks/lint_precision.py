"""Write each lint's precision on the labelled dev set into `checks/lints/precision.json`, the
file the battery reads to decide whether a lint fails a pair (precision ≥ 90 %) or only warns.

    math2 check DATA/checks-dev/pairs.jsonl --labels --calibration-out cal.json
    python benchmarks/lint_precision.py cal.json DATA/checks-dev/pairs.jsonl

(DATA: a data folder, `MATH2_DATA__DIR` or math2's data cache after `math2 data fetch checks-dev`.)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from math2.checks.lints.common import PRECISION_BAR, PRECISION_FILE


def main(calibration: str, dev_set: str) -> None:
    cal = json.loads(Path(calibration).read_text(encoding="utf-8"))
    digest = hashlib.sha256(Path(dev_set).read_bytes()).hexdigest()
    lints = {}
    for f in cal["checks"]:
        if not f["check"].startswith("lint."):
            continue
        p = f["precision"]
        lints[f["check"]] = {
            "flagged": p["n"],
            "true_flags": p["k"],
            "precision": p["value"],
            "precision_low": p["low"],
            "precision_high": p["high"],
            "recall": f["recall"]["value"],
            "false_flag_rate": f["false_flag"]["value"],
            "status": "warn"
            if p["value"] is not None and p["value"] < PRECISION_BAR
            else ("unmeasured" if p["value"] is None else "fail"),
        }
    doc = {
        "dev_set": dev_set,
        "dev_set_sha256": digest,
        "pairs": cal["pairs"],
        "unfaithful": cal["unfaithful"],
        "bar": PRECISION_BAR,
        "command": f"math2 check {dev_set} --labels --calibration-out {calibration}",
        "lints": lints,
    }
    PRECISION_FILE.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    for name, m in sorted(lints.items()):
        print(f"{name}: {m['status']} (precision {m['precision']}, {m['flagged']} flagged)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
