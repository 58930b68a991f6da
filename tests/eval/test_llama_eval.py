"""`run_eval` against a real (tiny) model: llama-server + SmolLM2-135M on 10 miniF2F items.

The model cannot formalize; the test asserts the harness copes end to end and that the report's
numbers agree with the stored samples: SC ≥ CC, every sample accounted for, files written.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from math2.config import LeanSettings, LLMSettings, Settings
from math2.eval import read_html_scores, read_png_scores, score, shared_registry, write_report
from math2.eval.harness import EvalOptions, run_eval
from math2.llm import add_model
from tests.conftest import benchmark_fixtures

pytestmark = pytest.mark.llm


def test_eval_with_smollm2_on_ten_items(tmp_path, sqlite_store, llama_server):
    with sqlite_store.session() as s:
        add_model(s, llama_server.model, provider="llama.cpp")
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'math2.db'}",
        llm=LLMSettings(
            base_url=llama_server.base_url, concurrency=2, json_schema=True, timeout_s=180
        ),
        lean=LeanSettings(
            project_dir=tmp_path,
            repl_command=[sys.executable, "-m", "math2.lean.testing.fake_repl"],
            workers=1,
            timeout_s=30,
        ),
    )
    v = shared_registry(benchmark_fixtures()).get("minif2f-test")
    opts = EvalOptions(
        model=llama_server.model, judges=[llama_server.model], k=1, limit=10, max_tokens=128
    )
    summary, samples = asyncio.run(run_eval(settings, sqlite_store, [v], opts))
    assert summary.done + summary.failed == 10 and len(samples) == summary.done
    scores = score(samples, ks=[1], model=llama_server.model)
    (b,) = scores.benchmarks
    assert b.version_hash == v.version_hash
    for k in (1,):
        assert 0.0 <= b.cc[llama_server.model][k].value <= b.sc[k].value <= 1.0
    for item in b.per_item.values():
        assert item["consistent"][llama_server.model] <= item["compiled"] <= item["n"]
    files = write_report(scores, tmp_path / "report")
    assert read_html_scores(files["html"]) == scores == read_png_scores(files["bars"])
