"""Token budgets per stage: `--max-tokens N` (the generator) or `--max-tokens STAGE=N`; a reply
cut at the client's deadline is fed back as cut off, like one cut at the token limit."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
import typer
from sqlalchemy import select

from math2.cli.formalize import _budgets
from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.formalize import FormalizeOptions, run_formalize
from math2.roles.formalize.loop import budget
from math2.store import Attempt
from tests.roles.formalize.scripts import (
    GENERATOR,
    JUDGE,
    PLANNER,
    formalize_unindexed,
    lean,
    write_items,
)


def _settings(tmp_path, base_url: str, **llm) -> Settings:
    return Settings(
        db_url=f"sqlite:///{tmp_path / 'm.db'}",
        llm=LLMSettings(base_url=base_url, concurrency=2, **llm),
        lean=LeanSettings(
            project_dir=tmp_path,
            repl_command=[sys.executable, "-m", "math2.lean.testing.fake_repl"],
            workers=1,
            timeout_s=30,
        ),
    )


def _registered(store) -> None:
    with store.session() as s:
        add_model(s, "gen", provider="fake")
        add_model(s, "judge", provider="fake")


def test_cli_budgets() -> None:
    assert _budgets([]) is None
    assert _budgets(["96"]) == 96
    assert _budgets(["generate=96", "judge=64", "plan=32"]) == {
        "generate": 96,
        "judge": 64,
        "plan": 32,
    }
    for bad in (["judge=x"], ["compile=5"], ["generate=0"], ["96", "judge=5"]):
        with pytest.raises(typer.Exit):
            _budgets(bad)


def test_budget_per_stage() -> None:
    assert budget(None, "judge", 512) == 512
    assert budget(96, "generate", 1024) == 96 and budget(96, "judge", 512) == 512
    assert budget({"judge": 64}, "judge", 512) == 64
    assert budget({"judge": 64}, "generate", 1024) == 1024


def test_stage_budgets_reach_the_requests(tmp_path, sqlite_store) -> None:
    _registered(sqlite_store)
    script = Script(
        models=["gen", "judge"],
        rules=[
            Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
            Rule(system=GENERATOR, reply=lean("theorem two_even : Even 2 := by sorry")),
            Rule(system=JUDGE, json={"consistent": True, "defects": []}),
        ],
    )
    inp = tmp_path / "in.jsonl"
    write_items(inp, [{"id": "two", "statement": "Two is even."}])
    with FakeServer(script) as srv:
        st = _settings(tmp_path, srv.base_url)
        opts = FormalizeOptions(
            model="gen", judge="judge", max_tokens={"plan": 40, "generate": 50, "judge": 60}
        )
        summary = formalize_unindexed(st, sqlite_store, inp, opts)
        sent = [r["body"] for r in srv.requests]
    assert summary.done == 1
    by_stage = {}
    for body in sent:
        system = body["messages"][0]["content"]
        stage = next(k for k, v in {"plan": PLANNER, "generate": GENERATOR, "judge": JUDGE}.items()
                     if v in system)  # fmt: skip
        by_stage.setdefault(stage, set()).add(body["max_tokens"])
    assert by_stage == {"plan": {40}, "generate": {50}, "judge": {60}}


def test_reply_cut_at_the_deadline_is_fed_back(tmp_path, sqlite_store) -> None:
    _registered(sqlite_store)
    script = Script(
        models=["gen", "judge"],
        rules=[
            Rule(system=GENERATOR, user="time limit", reply=lean("theorem t : True := by sorry")),
            # a server that stops sending after 5 tokens of an unclosed block
            Rule(system=GENERATOR, reply="```lean\ntheorem t : True := by " * 5, stall_after=5),
            Rule(system=JUDGE, json={"consistent": True, "defects": []}),
        ],
    )
    inp = tmp_path / "in.jsonl"
    write_items(inp, [{"id": "t", "statement": "True holds."}])
    with FakeServer(script) as srv:
        st = _settings(tmp_path, srv.base_url, timeout_s=1.0)
        opts = FormalizeOptions(model="gen", judge="judge", retrieval=False)
        summary = asyncio.run(run_formalize(st, sqlite_store, inp, opts))
        gens = [r["body"] for r in srv.requests if GENERATOR in json.dumps(r["body"])]
    assert summary.done == 1
    assert len(gens) == 2  # the cut reply was kept and answered by feedback, not resent
    assert "cut off at the time limit" in gens[1]["messages"][-1]["content"]
    with sqlite_store.session() as s:
        rows = list(s.scalars(select(Attempt).where(Attempt.stage == "generate")))
    assert [a.response["finish_reason"] for a in sorted(rows, key=lambda a: a.round)] == [
        "timeout",
        "stop",
    ]
