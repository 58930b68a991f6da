"""Align's precision and recall against human pairs, with scripted verdicts: exact figures."""

from __future__ import annotations

import asyncio

from math2.config import LLMSettings, Settings
from math2.llm.testing import FakeServer
from math2.roles.align.candidates import HumanPair
from math2.roles.align.evaluate import judge_pairs, labelled_pairs, score
from tests.roles.align.fixture import build, script


def test_precision_and_recall_on_scripted_verdicts(sqlite_store):
    build(sqlite_store, n=2)
    # positives: two pairs the script calls same, one it calls implies, one it cannot read
    positives = [
        HumanPair("metamath", "same0", "Lean.SAME.t0", "lists"),
        HumanPair("metamath", "same1", "Lean.SAME.t1", "lists"),
        HumanPair("metamath", "impl0", "Lean.IMPL.t0", "lists"),
        HumanPair("stacks", "0001", "Lean.GARB.t0", "mathlib @[stacks]"),
    ]

    def search(q, k):  # the same search's wrong top hit: a SAME declaration for IMPL0
        return [("Lean.SAME.t1", None), ("Lean.DIFF.t0", None)][:k]

    with sqlite_store.session() as s:
        pairs = labelled_pairs(s, positives, search, seed=1)
    assert [p.kind for p in pairs].count("positive") == 4
    assert [p.kind for p in pairs].count("hard") == 4
    assert [p.kind for p in pairs].count("random") == 4
    assert pairs[0].pair.left.text.startswith("Commutative law of addition.")
    with FakeServer(script()) as srv:
        st = Settings(llm=LLMSettings(base_url=srv.base_url, concurrency=2))
        results = asyncio.run(judge_pairs(st, sqlite_store, "judge", pairs))
    sc = score(pairs, results)
    # the scripted judge answers by the Lean side alone, so it calls every pair whose right
    # side is a SAME declaration `same`: the hard negatives fool it (as they are meant to)
    kinds = [(p.kind, p.pair.right.name) for p in pairs]
    assert kinds[:3] == [
        ("positive", "Lean.SAME.t0"),
        ("hard", "Lean.SAME.t1"),
        ("random", "Lean.SAME.t1"),
    ]
    assert (sc.n, sc.tp, sc.fp, sc.fn, sc.tn, sc.unjudged) == (12, 2, 6, 2, 2, 2)
    assert sc.precision == 0.25 and sc.recall == 0.5
