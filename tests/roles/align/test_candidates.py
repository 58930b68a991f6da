"""Candidate pairs: by search for unbound nodes, from @[stacks] attributes, from the lists."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from math2.roles.align import propose_by_search, scan_stacks
from math2.roles.align.candidates import list_pairs, stacks_pairs
from math2.store.models import Binding, Crosswalk, Mention, Node
from tests.roles.align.fixture import build

FIXTURES = Path(__file__).parent / "fixtures"


def test_search_proposes_candidates_for_unbound_nodes(sqlite_store):
    build(sqlite_store, n=1)
    queries: list[str] = []

    def search(q, k):
        queries.append(q)
        return [("Lean.SAME.t0", None), ("Lean.DIFF.t0", None), ("Lean.IMPL.t0", None)][:k]

    with sqlite_store.session() as s:
        bound = s.scalar(select(Node).where(Node.key == "setmm:garb0"))
        m = s.scalar(select(Mention).where(Mention.name == "Lean.GARB.t0"))
        s.add(Binding(node_id=bound.id, mention_id=m.id))
        s.flush()
        n = propose_by_search(s, "setmm", search, limit=2, k=2)
        assert n == 4  # two nodes, two hits each
        rows = list(
            s.scalars(
                select(Crosswalk).where(Crosswalk.extra["proposed_by"].as_string() == "search")
            )
        )
        assert {r.status for r in rows} == {"candidate"}
        assert bound.id not in {r.node_id for r in rows}
        assert sorted(r.extra["rank"] for r in rows) == [1, 1, 2, 2]
    assert len(queries) == 2
    assert "Commutative law of addition." in queries[0] and "( A + B )" in queries[0]
    with sqlite_store.session() as s:  # a second pass adds nothing twice
        assert propose_by_search(s, "setmm", search, limit=2, k=2) == 0


def test_stacks_attributes_from_a_source_tree():
    pairs = sorted((p.other, p.lean) for p in scan_stacks(FIXTURES / "stacks"))
    assert pairs == [("00EB", "Ideal.IsPrime.foo"), ("0BRI", "Module.Flat.bar")]


def test_stacks_and_list_pairs_from_the_store(sqlite_store):
    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Lean.SAME.t0"))
        m.extra = {"stacks": ["00AB"]}
        s.flush()
        assert [(p.other, p.lean) for p in stacks_pairs(s)] == [("00AB", "Lean.SAME.t0")]
        assert list_pairs(s) == []
