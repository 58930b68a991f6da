"""`math2 check --labels` on the labelled dev set with model judges: the scripted fake judges
(math2.llm.testing.FakeServer, a protocol double — its figures measure the pipeline, not a
model) or SmolLM2-135M through llama.cpp's llama-server (math2.llm.testing.llama).

    python benchmarks/checks_calibration.py --judges fake [--limit N] [--out cal.json]
    python benchmarks/checks_calibration.py --judges smollm2 --limit 40 [--max-tokens 256]

It works in a fresh SQLite store in a temporary folder (nothing else is touched), registers the
judges, runs the battery (the lints + one `consistency` entry per judge) through the same
`run_checks` / `calibrate_pairs` that `math2 check PAIRS --labels --judge …` uses, and prints the
table with the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

from math2.checks import default_config, run_checks
from math2.checks.calibration import render_calibration
from math2.checks.job import calibrate_pairs
from math2.config import LLMSettings, Settings
from math2.llm import add_model
from math2.store import Store

# Two scripted judges that disagree by rule: one accepts everything; one calls a statement
# inconsistent when it has no hypothesis binder before the colon (a crude "missing condition").
FAKE_RULES = [
    {"model": "^fake-accept$", "json": {"consistent": True, "defects": []}},
    {
        "model": "^fake-strict$",
        "user": r"theorem [^\s(\[{]+\s*:",
        "json": {
            "consistent": False,
            "defects": [{"kind": "missing_precondition", "clause": "no hypothesis"}],
        },
    },
    {"model": "^fake-strict$", "json": {"consistent": True, "defects": []}},
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=Path, help="default: the checks-dev data set's pairs.jsonl")
    ap.add_argument("--judges", choices=["fake", "smollm2"], required=True)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.pairs is None:
        from math2.config import load_settings
        from math2.data import locate

        args.pairs = locate(load_settings(), "checks-dev") / "pairs.jsonl"
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if args.judges == "fake":
            from math2.llm.testing import FakeServer, Script

            srv = stack.enter_context(FakeServer(Script.model_validate({"rules": FAKE_RULES})))
            judges = ["fake-accept", "fake-strict"]
            base_url = srv.base_url
        else:
            from math2.llm.testing.llama import LlamaServer

            srv = stack.enter_context(
                LlamaServer(n_predict=args.max_tokens, log_path=Path(tmp) / "llama.log")
            )
            judges = [srv.model]
            base_url = srv.base_url
        settings = Settings(
            db_url=f"sqlite:///{tmp}/cal.db",
            llm=LLMSettings(base_url=base_url, concurrency=2, timeout_s=600),
        )
        store = Store(settings.db_url)
        store.upgrade()
        with store.session() as s:
            for j in judges:
                add_model(s, j, provider=args.judges)
            s.commit()
        config = default_config(judges=judges, max_tokens=args.max_tokens)
        t0 = time.monotonic()
        summary = asyncio.run(run_checks(settings, store, args.pairs, config, limit=args.limit))
        wall = time.monotonic() - t0
        cal = calibrate_pairs(store, args.pairs, limit=args.limit, run_id=summary.run_id)
        store.close()
    print(render_calibration(cal))
    print(f"{summary.done} pairs, {summary.failed} failed, {wall:.0f} s wall", file=sys.stderr)
    if args.out:
        args.out.write_text(cal.model_dump_json(indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
