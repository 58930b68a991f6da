"""A formalize run (fakes) → trajectory reconstruction on math2.runs → the exported folder."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import select

from math2.datasets.build import build_dataset
from math2.eval import Registry, shared_registry
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.store.work import AgentText, ReviewStatus
from tests.conftest import benchmark_fixtures
from tests.roles.formalize.scripts import ITEMS, formalize_script, formalize_unindexed, write_items
from tests.roles.formalize.test_loop import settings_for

TRACE = (
    "The statement is about natural numbers, so the objects live in ℕ.\n"
    "A proof would go by `decide` or `norm_num`.\n"
    "```lean\ntheorem leak : 1 + 1 = 2 := by norm_num\n```\n"
    "The conclusion is an equation between numerals, mapped to an Eq in ℕ."
)


def test_formalize_run_to_dataset(tmp_path, sqlite_store):
    datasets = pytest.importorskip("datasets")
    with sqlite_store.session() as s:
        for m in ("gen", "judge", "tracer"):
            add_model(s, m, provider="fake")
    base = formalize_script()
    script = Script(
        rules=[Rule(model="^tracer$", reply=TRACE), *base.rules],
        models=["gen", "judge", "tracer"],
    )
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS)
    with FakeServer(script) as srv:
        st = settings_for(tmp_path, srv.base_url, tmp_path / "repl.jsonl")
        summary = formalize_unindexed(st, sqlite_store, inp)
        reg = shared_registry(benchmark_fixtures())
        out = asyncio.run(
            build_dataset(
                st,
                sqlite_store,
                summary.run_id,
                tmp_path / "ds",
                trace_model="tracer",
                source="toy-statements",
                licence="CC0-1.0",
                registry=reg,
            )
        )
        n = len(srv.requests)
        # resumed: the traces come from the finished run, nothing is asked again
        again = asyncio.run(
            build_dataset(
                st,
                sqlite_store,
                summary.run_id,
                tmp_path / "ds2",
                trace_model="tracer",
                source="toy-statements",
                licence="CC0-1.0",
                registry=reg,
            )
        )
        assert len(srv.requests) == n
        tracer_calls = [r for r in srv.requests if r["body"]["model"] == "tracer"]
    # alpha, beta, gamma pass; delta, epsilon, zeta do not (statements long enough: RL prompts)
    assert out.sft == 3 and again.sft == 3
    assert out.rl == 3
    # the trace model saw the statement and the final statement only: no rounds, no feedback
    for r in tracer_calls:
        user = r["body"]["messages"][-1]["content"]
        assert "sorry" in user and "round" not in user.lower() and "Evn" not in user
    ds = datasets.load_dataset(
        str(tmp_path / "ds"), "sft", split="train", cache_dir=str(tmp_path / "hf")
    )
    answers = {row["id"]: row["messages"][2]["content"] for row in ds}
    assert set(answers) == {"alpha", "beta", "gamma"}
    a = answers["gamma"]
    assert "gamma3" in a and a.rstrip().endswith("sorry\n```")
    assert "norm_num" not in a and "decide" not in a and "theorem leak" not in a
    assert ds[0]["trace_model"] == "tracer" and ds[0]["model"] == "gen"
    assert ds[0]["template"].startswith("datasets/reconstruct@1 sha256:")
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "| toy-statements | CC0-1.0 | 6 |" in card
    assert f"math2 formalize run {summary.run_id}" in card


def test_a_rejected_statement_is_absent_from_the_export(tmp_path, sqlite_store):
    """A person rejected alpha's statement: it is not exported; beta, confirmed, is marked so;
    gamma, which nobody reviewed, is marked unreviewed (in the files and on the card)."""
    with sqlite_store.session() as s:
        for m in ("gen", "judge", "tracer"):
            add_model(s, m, provider="fake")
    base = formalize_script()
    script = Script(rules=[Rule(model="^tracer$", reply=TRACE), *base.rules])
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS)
    with FakeServer(script) as srv:
        st = settings_for(tmp_path, srv.base_url, tmp_path / "repl.jsonl")
        summary = formalize_unindexed(st, sqlite_store, inp)
        with sqlite_store.session() as s:
            texts = {
                t.item: t
                for t in s.scalars(select(AgentText).where(AgentText.run_id == summary.run_id))
            }
            assert {"alpha", "beta", "gamma"} <= set(texts)
            texts["alpha"].status = ReviewStatus.REJECTED.value
            texts["beta"].status = ReviewStatus.CONFIRMED.value
            s.commit()
        out = asyncio.run(
            build_dataset(
                st,
                sqlite_store,
                summary.run_id,
                tmp_path / "ds",
                trace_model="tracer",
                source="toy-statements",
                licence="CC0-1.0",
                registry=Registry(),
            )
        )
    assert out.sft == 2
    rows = [json.loads(x) for x in (tmp_path / "ds/sft/messages.jsonl").read_text().splitlines()]
    assert {r["id"]: r["review"] for r in rows} == {"beta": "confirmed", "gamma": "unreviewed"}
    everything = "".join(p.read_text("utf-8") for p in (tmp_path / "ds").rglob("*.jsonl"))
    assert "alpha" not in everything
    assert "records have a statement no person has reviewed" in (
        tmp_path / "ds/README.md"
    ).read_text("utf-8")
