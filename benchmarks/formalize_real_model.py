"""Where a real-model formalize run spends its time: wall, model, Lean, and the rest per item.

    PYTHONPATH=src .venv/bin/python benchmarks/formalize_real_model.py [--items 16] [--rounds 2]

Starts llama-server with SmolLM2-135M (math2.llm.testing.llama), formalizes the first N FATE-M
statements (the `fate-m` data set: `math2 data fetch fate-m`) with `run_formalize` (no index), Lean
answered by the fake REPL (a test double, not Lean: its verdicts are not figures about Lean).
Per item: wall time (first call's start, queue included, to the item's end), model time (the
calls' own latency: streamed replies, first token to last), queue time (the wait for a model slot,
and backoff before a retry, from each attempt's `queue_s`), Lean time, and math2's own overhead
(wall less the three). Budgets per stage: `--max-tokens` for the generator, `--judge-tokens`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing.llama import LlamaServer
from math2.roles.formalize import FormalizeOptions, run_formalize
from math2.runs.queries import run_detail
from math2.store import Attempt, RunItem, Store


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=16)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=192)
    p.add_argument("--judge-tokens", type=int, default=64)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--data", help="FATE-M's fate_m.json (default: the fate-m data set)")
    args = p.parse_args()
    if args.data is None:
        from math2.config import load_settings
        from math2.data import locate

        args.data = locate(load_settings(), "fate-m") / "fate_m.json"
    rows = json.loads(Path(args.data).read_text(encoding="utf-8"))[: args.items]
    tmp = Path(tempfile.mkdtemp(prefix="m2-realmodel-"))
    inp = tmp / "in.jsonl"
    inp.write_text(
        "".join(
            json.dumps({"id": f"fate-{r['id']}", "statement": r["informal_statement"]}) + "\n"
            for r in rows
        )
    )
    store = Store(f"sqlite:///{tmp / 'm.db'}")
    store.upgrade()
    with LlamaServer(parallel=args.concurrency, n_predict=args.max_tokens) as srv:
        with store.session() as s:
            add_model(s, srv.model, provider="llama.cpp")
        settings = Settings(
            db_url=f"sqlite:///{tmp / 'm.db'}",
            llm=LLMSettings(
                base_url=srv.base_url, concurrency=args.concurrency, json_schema=True, timeout_s=300
            ),
            lean=LeanSettings(
                project_dir=tmp,
                repl_command=[sys.executable, "-m", "math2.lean.testing.fake_repl"],
                workers=1,
            ),
        )
        opts = FormalizeOptions(
            model=srv.model,
            judge=srv.model,
            retrieval=False,
            max_rounds=args.rounds,
            max_tokens={"generate": args.max_tokens, "judge": args.judge_tokens},
        )
        t0 = time.monotonic()
        summary = asyncio.run(run_formalize(settings, store, inp, opts))
        wall = time.monotonic() - t0
    with store.session() as s:
        items = {r.item: r for r in s.scalars(select(RunItem))}
        attempts = list(s.scalars(select(Attempt)))
        detail = run_detail(s, summary.run_id)
        tokens = sum(a.tokens_out for a in attempts if not (a.model or "").startswith("lean:"))
    per: dict[str, dict[str, float]] = {}
    for a in attempts:
        if a.stage == "search":
            continue
        d = per.setdefault(
            a.item, {"model": 0.0, "queue": 0.0, "lean": 0.0, "start": float("inf"), "calls": 0}
        )
        kind = "lean" if (a.model or "").startswith("lean:") else "model"
        queued = float((a.response or {}).get("queue_s") or 0.0) if kind == "model" else 0.0
        if not a.cached:
            d[kind] += a.duration_s
        d["queue"] += queued
        d["calls"] += kind == "model"
        # an attempt row is written when its call ends: it began duration + queue before
        d["start"] = min(d["start"], a.started_at.timestamp() - a.duration_s - queued)
    cols = ("wall", "model", "queue", "lean", "overhead", "calls")
    rows_ = []
    for item, d in per.items():
        span = items[item].finished_at.timestamp() - d["start"]
        over = span - d["model"] - d["queue"] - d["lean"]
        rows_.append((span, d["model"], d["queue"], d["lean"], over, d["calls"]))
    med = [statistics.median(x[i] for x in rows_) for i in range(len(cols))]
    tot = [sum(x[i] for x in rows_) for i in range(len(cols))]
    print(f"items {len(items)} · run wall {wall:.1f}s · {summary.items_per_s:.3f} items/s")
    print(f"outcomes: {detail.outcomes} · replies: {detail.finish_reasons}")
    print(f"retries {summary.retries} · timeouts {summary.timeouts} · calls with no reply "
          f"{detail.calls_failed}")  # fmt: skip
    print(f"tokens out {tokens} · model time {tot[1]:.1f}s")
    print("per item (median): " + " ".join(f"{c} {v:.2f}" for c, v in zip(cols, med, strict=True)))
    print("sum over items:    " + " ".join(f"{c} {v:.2f}" for c, v in zip(cols, tot, strict=True)))
    print(f"shares of item time: model {tot[1] / tot[0]:.1%}, queue {tot[2] / tot[0]:.1%}, "
          f"Lean {tot[3] / tot[0]:.1%}, math2 overhead {tot[4] / tot[0]:.1%}")  # fmt: skip
    print(f"math2 overhead per model call: {tot[4] / max(1, tot[5]):.3f}s")


if __name__ == "__main__":
    main()
