"""`math2 formalize` on 16 FATE-M statements against a real (tiny) model: llama-server with
SmolLM2-135M, in CI time (tight token budgets per stage, one round, no retrieval).

What it checks is the engine, not the model: every statement ends with an outcome, no call is
lost to a timeout (streamed replies, budget-derived deadlines), the progress lines a run prints
without a terminal, and the outcome breakdown of `math2 runs show`. Lean is the fake REPL (a test
double, not Lean).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.llm import add_model
from math2.runs.context import CALL_FAILED
from math2.store import Attempt, RunItem, Store
from tests.data_conformance import real_data

pytestmark = [pytest.mark.llm, pytest.mark.data("fate-m")]  # the real FATE-M (conformance)
ITEMS = 16


def _env(tmp: Path, base_url: str, db: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_LLM__BASE_URL": base_url,
            "MATH2_LLM__CONCURRENCY": "2",
            "MATH2_LLM__TIMEOUT_S": "120",
            "MATH2_LEAN__PROJECT_DIR": str(tmp),
            "MATH2_LEAN__REPL_COMMAND": json.dumps(
                [sys.executable, "-m", "math2.lean.testing.fake_repl"]
            ),
            "MATH2_LEAN__WORKERS": "1",
            "MATH2_CONFIG": str(tmp / "none.toml"),
        }
    )
    return env


def test_formalize_16_fate_m_statements_with_smollm2(tmp_path, llama_server):
    data = real_data("fate-m") / "fate_m.json"
    rows = json.loads(data.read_text(encoding="utf-8"))[:ITEMS]
    assert len(rows) == ITEMS, f"{data} has fewer than {ITEMS} statements"
    inp = tmp_path / "fate16.jsonl"
    inp.write_text(
        "".join(
            json.dumps({"id": f"fate-{r['id']}", "statement": r["informal_statement"]}) + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        add_model(s, llama_server.model, provider="llama.cpp")
    env = _env(tmp_path, llama_server.base_url, db)
    cmd = [
        sys.executable, "-m", "math2", "formalize", str(inp),
        "--model", llama_server.model, "--judge", llama_server.model,
        "--max-rounds", "1", "--no-retrieval",
        "--max-tokens", "generate=96", "--max-tokens", "judge=64",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    m = re.search(r"run (\d+): (\d+) formalized this time", done.stdout)
    assert m, done.stdout
    run_id, n_done = int(m.group(1)), int(m.group(2))
    assert n_done == ITEMS, done.stdout

    # progress without a terminal: plain lines with the counts, rate, ETA, retries, timeouts
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith(f"run {run_id} formalize:")]
    assert lines, done.stderr
    for ln in lines:
        assert re.search(r"done \d+/16 \(.*\) · errors 0 · running \d+", ln), ln
        assert "items/s" in ln and "ETA" in ln and "retries" in ln and "timeouts 0" in ln, ln

    with store.session() as s:
        items = list(s.scalars(select(RunItem).where(RunItem.run_id == run_id)))
        attempts = list(s.scalars(select(Attempt).where(Attempt.run_id == run_id)))
    store.close()
    assert len(items) == ITEMS and all(i.status == "done" for i in items)
    outcomes: dict[str, int] = {}
    for i in items:
        outcomes[i.result["outcome"]] = outcomes.get(i.result["outcome"], 0) + 1
    model = [a for a in attempts if a.stage in ("generate", "judge")]
    assert sum(a.stage == "generate" for a in model) == ITEMS  # one round, one call each
    # no call lost: every call brought a reply within its budget; a reply its deadline cut
    # (possible only on a starved machine) keeps its text and is counted, never sent again
    assert not [a for a in model if a.verdict == CALL_FAILED]
    reasons = [f for a in model for f in a.response["finish_reasons"]]
    assert set(reasons) <= {"stop", "length", "timeout"}
    for a in model:
        if "timeout" in a.response["finish_reasons"] and a.stage == "generate":
            assert a.response["content"] and a.tokens_out > 0
    for a in model:
        assert a.request["max_tokens"] == (96 if a.stage == "generate" else 64)
        assert a.tokens_out <= a.request["max_tokens"] * (1 + a.response.get("repairs", 0))
        assert a.response["queue_s"] >= 0

    # `runs show`: the breakdown by outcome, model time apart from queue time, the replies
    show = subprocess.run(
        [sys.executable, "-m", "math2", "runs", "show", str(run_id)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert show.returncode == 0, show.stdout + show.stderr
    text = " ".join(show.stdout.split())
    assert "outcomes:" in text
    for name, n in outcomes.items():
        assert re.search(rf"{name} {n}\b", text), (name, n, show.stdout)
    assert re.search(r"time: model [\d.]+s, queued [\d.]+s", text), show.stdout
    assert "replies:" in text and "model calls with no reply" not in text
    cut = reasons.count("timeout")
    replies = re.search(r"replies: (.*)", show.stdout).group(1)
    assert (f"timeout {cut}" in replies) if cut else ("timeout" not in replies)
    print(f"16 FATE-M statements with SmolLM2 in {took:.0f}s: {outcomes}; replies cut: {cut}")
