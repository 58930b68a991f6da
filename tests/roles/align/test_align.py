"""The align role on the fake server: verdicts into edges, reasons kept, none unjudged an edge."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from math2.config import LLMSettings, Settings
from math2.llm.testing import FakeServer
from math2.report import build_report
from math2.roles.align import AlignOptions, pair_of, run_align
from math2.store.models import Binding, Crosswalk
from math2.store.work import Attempt
from tests.roles.align.fixture import build, script


def _run(store, base_url, **kw):
    st = Settings(llm=LLMSettings(base_url=base_url, concurrency=4))
    return asyncio.run(run_align(st, store, AlignOptions(model="judge", **kw)))


def _rows(store):
    with store.session() as s:
        return {c.id: (c.status, dict(c.extra or {})) for c in s.scalars(select(Crosswalk))}


def _relations(store):
    with store.session() as s:
        return {c.id: c.relation for c in s.scalars(select(Crosswalk))}


def test_verdicts_become_edges_or_stay_candidates(sqlite_store):
    built = build(sqlite_store)
    with FakeServer(script()) as srv:
        summary = _run(sqlite_store, srv.base_url, dataset="theoremgraph")
    assert summary.done == 8 and summary.failed == 0
    rows = _rows(sqlite_store)
    for key, cid in built.pairs.items():
        status, extra = rows[cid]
        note = extra["align"]
        assert note["dataset"] == "theoremgraph"
        assert note["model"] == "judge"
        assert note["template"] == "align/judge@2" and len(note["template_hash"]) == 64
        assert note["run"] == summary.run_id and note["attempt"]
        if key.startswith("SAME"):
            assert status == "accepted" and note["verdict"] == "same"
        elif key.startswith("IMPL"):
            # one implies the other: its own edge relation, with the direction, never same_as
            assert status == "accepted" and note["outcome"] == "implies"
            assert extra["direction"] == note["direction"] == "node_implies_target"
        else:
            # a rejected pair stays a candidate and keeps its reason
            assert status == "candidate", key
            assert note["outcome"] in ("rejected", "unjudged")
            assert note["reasons"]
    assert rows[built.pairs["IMPL0"]][1]["align"]["verdict"] == "implies"
    assert rows[built.pairs["IMPL0"]][1]["align"]["differing_clauses"] == ["n = 0"]
    assert rows[built.pairs["DIFF1"]][1]["align"]["reasons"] == (
        "one is about sums, one about products"
    )
    garb = rows[built.pairs["GARB0"]][1]["align"]
    assert garb["outcome"] == "unjudged" and "verdict" not in garb
    assert "no valid AlignVerdict" in garb["reasons"]
    # the other dataset's candidate was never judged: no verdict, not an edge
    assert rows[built.other] == ("candidate", {})
    accepted = {cid for cid, (st, _) in rows.items() if st == "accepted"}
    rel = _relations(sqlite_store)
    same = {built.pairs["SAME0"], built.pairs["SAME1"]}
    implies = {built.pairs["IMPL0"], built.pairs["IMPL1"]}
    assert accepted == same | implies
    assert {rel[c] for c in same} == {"same_as"} and {rel[c] for c in implies} == {"implies"}
    with sqlite_store.session() as s:
        assert build_report(s).crosswalks == 4
        bindings = list(s.scalars(select(Binding)))  # only `same` proposes a binding
        assert len(bindings) == 2 and {b.status for b in bindings} == {"proposed"}
        assert {b.origin for b in bindings} == {"align"}
        assert all(b.attempt_id for b in bindings)
        assert s.scalar(select(Attempt.stage).limit(1)) == "align"


def test_every_edge_has_a_verdict(sqlite_store):
    """Whatever the judge answers, an accepted row always carries its verdict: `same` for a
    same_as edge, `implies` (with a direction) for an implies edge."""
    build(sqlite_store, n=3)
    with FakeServer(script()) as srv:
        _run(sqlite_store, srv.base_url)
    rel = _relations(sqlite_store)
    for cid, (status, extra) in _rows(sqlite_store).items():
        if status == "accepted":
            want = {"same_as": "same", "implies": "implies"}[rel[cid]]
            assert extra["align"]["verdict"] == want


def test_rerun_judges_nothing_again(sqlite_store):
    build(sqlite_store)
    with FakeServer(script()) as srv:
        _run(sqlite_store, srv.base_url, dataset="theoremgraph")
        first = len(srv.requests)
        again = _run(sqlite_store, srv.base_url, dataset="theoremgraph")
        assert len(srv.requests) == first
    assert again.total == 0


def test_pair_sides_hold_the_store_text(sqlite_store):
    built = build(sqlite_store)
    with sqlite_store.session() as s:
        pair = pair_of(s, s.get(Crosswalk, built.pairs["SAME0"]))
    assert pair.dataset == "theoremgraph"
    assert pair.left.system == "metamath" and pair.left.name == "same0"
    assert "Commutative law of addition." in pair.left.text
    assert "( A + B ) = ( B + A )" in pair.left.text
    assert pair.right.name == "Lean.SAME.t0" and "a + b = b + a" in pair.right.text


def test_unregistered_model_is_refused(sqlite_store):
    from math2.llm import UnregisteredModel

    build(sqlite_store)
    with pytest.raises(UnregisteredModel):
        asyncio.run(
            run_align(
                Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1")),
                sqlite_store,
                AlignOptions(model="nobody"),
            )
        )


def test_an_implies_verdict_needs_its_direction():
    from pydantic import ValidationError

    from math2.roles.align import AlignVerdict, Direction

    with pytest.raises(ValidationError, match="direction"):
        AlignVerdict(verdict="implies", reasons="a special case")
    v = AlignVerdict(verdict="implies", reasons="x", direction="right_implies_left")
    assert v.direction is Direction.RIGHT_IMPLIES_LEFT
    same = AlignVerdict(verdict="same", reasons="x", direction="left_implies_right")
    assert same.direction is None
