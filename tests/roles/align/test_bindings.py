"""K6.5: a binding to an AI-written library waits for its definitions; the report's AI share."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from math2.report import build_report
from math2.roles.align import confirm_definition, definitions_to_review
from math2.store.models import Binding, Mention, Node
from math2.web.review import Decision, ReviewError, decide_binding
from tests.roles.align.fixture import ai_library, build


def test_ai_binding_waits_for_each_definition(sqlite_store):
    ids = ai_library(sqlite_store)
    with sqlite_store.session() as s:
        defs = definitions_to_review(s, ids["binding"])
        assert [(d.name, d.confirmed) for d in defs] == [("AiLib.Foo", False), ("AiLib.Bar", False)]
        with pytest.raises(ReviewError, match=r"AiLib\.Foo, AiLib\.Bar"):
            decide_binding(s, ids["binding"], Decision.CONFIRM, "ann", "looks right")
        confirm_definition(s, ids["foo"], "ann")
        with pytest.raises(ReviewError, match=r"AiLib\.Bar") as exc:
            decide_binding(s, ids["binding"], Decision.CONFIRM, "ann", "looks right")
        assert "AiLib.Foo" not in str(exc.value)
        assert s.get(Binding, ids["binding"]).status == "checked"
        confirm_definition(s, ids["bar"], "ann")
        decide_binding(s, ids["binding"], Decision.CONFIRM, "ann", "looks right")
        assert s.get(Binding, ids["binding"]).status == "confirmed"


def test_human_library_binding_needs_no_definition_review(sqlite_store):
    build(sqlite_store)
    with sqlite_store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Lean.SAME.t0"))
        node = s.scalar(select(Node).where(Node.key == "setmm:same0"))
        b = Binding(node_id=node.id, mention_id=m.id)
        s.add(b)
        s.flush()
        assert definitions_to_review(s, b.id) == []
        with pytest.raises(ReviewError, match="not been checked by Lean"):
            decide_binding(s, b.id, Decision.CONFIRM, "ann", "ok")
        b.status = "checked"
        decide_binding(s, b.id, Decision.CONFIRM, "ann", "ok")
        assert b.status == "confirmed"


def test_rejecting_an_ai_binding_is_never_blocked(sqlite_store):
    ids = ai_library(sqlite_store)
    with sqlite_store.session() as s:
        decide_binding(s, ids["binding"], Decision.REJECT, "ann", "wrong result")
        assert s.get(Binding, ids["binding"]).status == "rejected"


def test_report_ai_binding_share_is_exact(sqlite_store):
    """Bindings per library, to ai/mixed libraries, to a model's statements, by status."""
    from math2.store import AgentText
    from math2.store.models import ModelEntry
    from tests.roles.align.fixture import _source, mention

    build(sqlite_store)
    ids = ai_library(sqlite_store)  # one binding to the ai library (checked)
    with sqlite_store.session() as s:
        for name, key in (("Lean.SAME.t0", "setmm:same0"), ("Lean.DIFF.t1", "setmm:diff1")):
            m = s.scalar(select(Mention).where(Mention.name == name))
            node = s.scalar(select(Node).where(Node.key == key))
            s.add(Binding(node_id=node.id, mention_id=m.id, status="confirmed"))
        # a mixed library counts as ai (K6.5), even where its declaration row says human
        mixed = _source(s, "mixed-lib", "lean4", authored="mixed")
        m = mention(s, mixed, "Mixed.thm", "theorem Mixed.thm : True", authored="human")
        node = s.scalar(select(Node).where(Node.key == "setmm:impl0"))
        s.add(Binding(node_id=node.id, mention_id=m.id, status="check_failed"))
        # a statement a model wrote: a binding in no library
        model = s.scalar(select(ModelEntry).where(ModelEntry.name == "judge"))
        text = AgentText(
            kind="formal_statement",
            body="theorem t : True := sorry",
            model_id=model.id,
            template_id="formalize/generate@1",
            template_hash="0" * 64,
        )
        s.add(text)
        s.flush()
        node = s.scalar(select(Node).where(Node.key == "setmm:garb0"))
        s.add(Binding(node_id=node.id, agent_text_id=text.id, origin="formalize"))
        s.flush()
        rep = build_report(s)
    assert rep.bindings == 5 and rep.bindings_to_ai == 2 and rep.bindings_generated == 1
    assert rep.ai_binding_share == pytest.approx(2 / 5, abs=0)
    assert rep.bindings_by_status == {
        "checked": 1,
        "confirmed": 2,
        "check_failed": 1,
        "proposed": 1,
    }
    per = {r.name: r.bindings for r in rep.sources}
    assert per == {
        "mathlib": 2,
        "setmm": 0,
        "theoremgraph": 0,
        "stacks-mathlib": 0,
        "ai-lib": 1,
        "mixed-lib": 1,
    }
    assert ids["binding"]
