"""Refinement reaches the model: round 2 is a new request carrying round 1's outcome."""

from __future__ import annotations

import asyncio
import json
import sys

from sqlalchemy import select

from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.formalize import FormalizeOptions, Outcome, run_formalize
from math2.roles.formalize.feedback import NO_LEAN_BLOCK, extract
from math2.store import Attempt, RunItem
from tests.roles.formalize.scripts import GENERATOR, JUDGE, PLANNER, lean, write_items

PROSE = "The theorem states that two is even, which follows since 2 = 2 * 1."


def test_prose_with_theorem_is_no_lean_block() -> None:
    e = extract(PROSE)
    assert e.code is None and e.source == NO_LEAN_BLOCK and "no ```lean block" in e.note
    cut = extract("```lean\ntheorem t : True := by so")
    assert cut.code is None and "never closed" in cut.note
    tagged = extract("Here: <lean>theorem t : True := by sorry</lean>")
    assert tagged.source == "tag" and tagged.code == "theorem t : True := by sorry"
    fenced = extract(lean("theorem t : True := by sorry"))
    assert fenced.source == "fence" and fenced.code.startswith("theorem t")


def test_round_two_after_no_lean_block_is_a_new_request_with_the_feedback(
    tmp_path, sqlite_store
) -> None:
    with sqlite_store.session() as s:
        add_model(s, "gen", provider="fake")
        add_model(s, "judge", provider="fake")
    script = Script(
        models=["gen", "judge"],
        rules=[
            Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
            Rule(
                system=GENERATOR,
                user="no Lean to check",
                reply=lean("theorem two_even : Even 2 := by sorry"),
            ),
            Rule(system=GENERATOR, reply=PROSE),
            Rule(system=JUDGE, user="could not be read", json={"consistent": True, "defects": []}),
            Rule(system=JUDGE, reply="I think it is fine {not json"),
        ],
    )
    inp = tmp_path / "in.jsonl"
    write_items(inp, [{"id": "two", "statement": "Two is even."}])
    with FakeServer(script) as srv:
        st = Settings(
            db_url=f"sqlite:///{tmp_path / 'm.db'}",
            llm=LLMSettings(base_url=srv.base_url, concurrency=2),
            lean=LeanSettings(
                project_dir=tmp_path,
                repl_command=[sys.executable, "-m", "math2.lean.testing.fake_repl"],
                workers=1,
                timeout_s=30,
            ),
        )
        opts = FormalizeOptions(model="gen", judge="judge", retrieval=False)
        asyncio.run(run_formalize(st, sqlite_store, inp, opts))
        sent = list(srv.requests)
    gens = [r["body"] for r in sent if GENERATOR in r["body"]["messages"][0]["content"]]
    assert len(gens) == 2 and gens[0] != gens[1]  # round 2 was asked, not answered from a cache
    assert "no Lean to check" in gens[1]["messages"][-1]["content"]
    assert "no ```lean block" in gens[1]["messages"][-1]["content"]
    judges = [r["body"] for r in sent if JUDGE in r["body"]["messages"][0]["content"]]
    assert len(judges) == 2
    first, repair = judges
    assert repair["messages"] != first["messages"] and "could not be read" in json.dumps(repair)
    assert repair.get("temperature", 0) > first.get("temperature", 0)
    # each stage has its own token budget, from its template
    assert {g["max_tokens"] for g in gens} == {1024} and {j["max_tokens"] for j in judges} == {512}
    with sqlite_store.session() as s:
        item = s.scalar(select(RunItem).where(RunItem.item == "two"))
        rounds = item.result["rounds"]
        judge_attempt = s.scalar(select(Attempt).where(Attempt.stage == "judge"))
        assert judge_attempt.response["repairs"] == 1
    assert item.result["outcome"] == Outcome.PASSED
    assert rounds[0]["extraction"] == NO_LEAN_BLOCK and rounds[1]["extraction"] == "fence"
    assert "fake-repl" in rounds[1]["compiled_by"]
