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
    build(sqlite_store)
    ids = ai_library(sqlite_store)
    with sqlite_store.session() as s:
        for name, key in (("Lean.SAME.t0", "setmm:same0"), ("Lean.DIFF.t1", "setmm:diff1")):
            m = s.scalar(select(Mention).where(Mention.name == name))
            node = s.scalar(select(Node).where(Node.key == key))
            s.add(Binding(node_id=node.id, mention_id=m.id))
        s.flush()
        rep = build_report(s)
    assert rep.bindings == 3 and rep.bindings_to_ai == 1
    assert rep.ai_binding_share == pytest.approx(1 / 3, abs=0)
    per = {r.name: r.bindings for r in rep.sources}
    assert per["mathlib"] == 2 and per["ai-lib"] == 1 and per["setmm"] == 0
    assert ids["binding"]
