"""Cross-system formalization: the set.mm declaration goes into the formalize input."""

from __future__ import annotations

import json

import pytest

from math2.errors import Math2Error
from math2.roles.align.cross import source_statement, write_inputs
from tests.roles.align.fixture import build


def test_setmm_declaration_in_the_context(sqlite_store, tmp_path):
    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        by_node = source_statement(s, "setmm", "setmm:same0")
        by_name = source_statement(s, "setmm", "same0")
        path = write_inputs(s, "setmm", ["same0", "setmm:diff0"], tmp_path / "in.jsonl")
    assert by_node == by_name
    assert by_node["id"] == "setmm:same0"
    text = by_node["statement"]
    assert text.startswith("SAME result 0.")
    assert "Commutative law of addition." in text
    assert "|- ( ( A e. CC /\\ B e. CC ) -> ( A + B ) = ( B + A ) )" in text
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["setmm:same0", "setmm:diff0"]


def test_unknown_node_and_system_are_clear_errors(sqlite_store):
    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        with pytest.raises(Math2Error, match="no active setmm declaration or node 'nope'"):
            source_statement(s, "setmm", "nope")
        with pytest.raises(Math2Error, match="--from must be one of"):
            source_statement(s, "coq", "x")
        with pytest.raises(Math2Error, match="no mizar-mml library"):
            source_statement(s, "mizar", "x")


def test_cross_formalized_statement_is_a_binding_checked_by_lean(sqlite_store, tmp_path):
    """formalize --from: the accepted statement is the node's proposed binding (origin
    formalize, its Lean side the agent text); the check stage then checks it at GENERATED
    trust and names the Lean that did."""
    import asyncio
    import sys

    from sqlalchemy import select

    from math2.config import LeanSettings, LLMSettings, Settings
    from math2.llm import add_model
    from math2.llm.testing import FakeServer, Rule, Script
    from math2.roles.align import CheckOptions, run_check
    from math2.roles.formalize import FormalizeOptions, run_formalize
    from math2.store import AgentText, Binding, Node
    from tests.roles.formalize.scripts import GENERATOR, JUDGE, PLANNER, consistent, lean

    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        add_model(s, "gen")
        path = write_inputs(s, "setmm", ["same0"], tmp_path / "in.jsonl")
        node_id = s.scalar(select(Node.id).where(Node.key == "setmm:same0"))
    assert json.loads(path.read_text())["node"] == "setmm:same0"
    script = Script(
        models=["gen", "judge"],
        rules=[
            Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
            Rule(
                system=GENERATOR,
                user="Commutative law",
                reply=lean("theorem same0 (a b : ℕ) : a + b = b + a := by sorry"),
            ),
            Rule(system=JUDGE, json=consistent()),
        ],
    )
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    with FakeServer(script) as srv:
        st = Settings(
            llm=LLMSettings(base_url=srv.base_url, concurrency=2),
            lean=LeanSettings(project_dir=tmp_path, repl_command=repl, workers=1),
        )
        opts = FormalizeOptions(model="gen", judge="judge", retrieval=False)
        summary = asyncio.run(run_formalize(st, sqlite_store, path, opts))
    assert summary.done == 1
    with sqlite_store.session() as s:
        b = s.scalar(select(Binding))
        text = s.get(AgentText, b.agent_text_id)
        assert (b.node_id, b.origin, b.status) == (node_id, "formalize", "proposed")
        assert b.mention_id is None
        assert text.node_id == node_id and "theorem same0" in text.body
    asyncio.run(run_check(st, sqlite_store, CheckOptions()))
    with sqlite_store.session() as s:
        b = s.scalar(select(Binding))
        assert b.status == "checked", b.lean_check
        assert b.lean_check["trust"] == "generated" and b.lean_check["mode"] == "statement"
        assert b.lean_check["type"] == "(a b : ℕ) : a + b = b + a"
        assert "test double" in b.lean_check["compiled_by"]
