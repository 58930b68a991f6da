"""The whole loop against a real (tiny, mostly wrong) model: llama-server + SmolLM2-135M.

The model cannot be expected to formalize anything; the test asserts that the engine copes: no
crash, every model call and Lean check stored as an attempt, the judge's JSON-schema output
honoured, and nothing passed that did not both compile and satisfy the judge.
"""

from __future__ import annotations

import sys

import pytest
from sqlalchemy import select

from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.roles.formalize import FormalizeOptions, Outcome
from math2.store import AgentText, Attempt, LLMResponse, RunItem
from tests.roles.formalize.scripts import formalize_unindexed, write_items

pytestmark = pytest.mark.llm
FAKE_REPL = [sys.executable, "-m", "math2.lean.testing.fake_repl"]

ITEMS = [
    {"id": "sum", "statement": "For every natural number n, n + 0 = n."},
    {"id": "even", "statement": "The sum of two even integers is even."},
]


def test_formalize_with_smollm2(tmp_path, sqlite_store, llama_server):
    with sqlite_store.session() as s:
        add_model(s, llama_server.model, provider="llama.cpp")
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS)
    repl_log = tmp_path / "repl.jsonl"
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'm.db'}",
        llm=LLMSettings(
            base_url=llama_server.base_url, concurrency=2, json_schema=True, timeout_s=180
        ),
        lean=LeanSettings(
            project_dir=tmp_path,
            repl_command=[*FAKE_REPL, "--log", str(repl_log)],
            workers=1,
            timeout_s=30,
        ),
    )
    options = FormalizeOptions(
        model=llama_server.model, judge=llama_server.model, max_rounds=2, max_tokens=160
    )
    summary = formalize_unindexed(settings, sqlite_store, inp, options)
    assert summary.done + summary.failed == len(ITEMS)
    with sqlite_store.session() as s:
        items = {r.item: r for r in s.scalars(select(RunItem))}
        attempts = list(s.scalars(select(Attempt)))
        stored_calls = s.scalar(select(LLMResponse.key).limit(1))
        texts = {t.item: t for t in s.scalars(select(AgentText))}
    assert set(items) == {i["id"] for i in ITEMS}
    assert stored_calls is not None
    by_item: dict[str, list[Attempt]] = {}
    for a in attempts:
        by_item.setdefault(a.item, []).append(a)
    for item_id, row in items.items():
        result = row.result or {}
        rounds = result.get("rounds", [])
        assert rounds, f"{item_id}: no round recorded"
        # every model call and Lean check of every round is an attempt row
        ids = {aid for r in rounds for aid in r["attempt_ids"]}
        assert ids <= {a.id for a in by_item[item_id]}
        assert any(a.stage == "generate" for a in by_item[item_id])
        for r in rounds:
            if r["lean"] is not None:
                assert r["compile_status"] is not None
        # nothing wrongly passed: a pass needs a compiled round the judge found consistent
        if result.get("outcome") == Outcome.PASSED:
            last = rounds[-1]
            assert last["compile_passed"] and last["consistent"] and not last["defects"]
            assert item_id in texts and texts[item_id].status == "pending"
        else:
            assert item_id not in texts
    # the judge and the planner were asked under the JSON schema; each verdict is recorded as
    # parsed or unparseable, never silently dropped
    for a in attempts:
        if a.stage in ("judge", "plan"):
            assert a.request["response_format"]["type"] == "json_schema"
            assert a.verdict in ("parsed", "unparseable")
