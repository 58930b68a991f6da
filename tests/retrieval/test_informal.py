"""Issue 45 §4: the informal text the informalize role wrote (here with the fake model) is a
part of the index of its own, fused and read by the learned ranker; a hit shows it with who
wrote it and whether a person reviewed it; rejected, edited and unaccepted texts stay out."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app as cli
from math2.config import LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.retrieval import Searcher
from math2.retrieval.features import FEATURES, RANK_MISSING, candidate_features
from math2.retrieval.index import PARTS, SearchIndex, build_index
from math2.retrieval.informal import Provenance
from math2.roles.informalize import InformalizeOptions, run_informalize
from math2.store import AgentText
from math2.web.review import Decision, decide_agent_text

WRITE = "You write the natural-language statement"
BACK = "translate Lean 4 theorem statements"
NLI = "compare two mathematical statements"
TARGET = "Demo.uses_char"
POINT = "Two different letters of the alphabet are unequal."
QUERY = "letters of the alphabet"


def script() -> Script:
    rules = [
        Rule(system=WRITE, user=r"Declaration: Demo\.uses_char ", reply=POINT),
        Rule(system=WRITE, user=r"Declaration: Demo\.idf ", reply="The zorblax map of a type."),
        Rule(system=WRITE, reply="A statement about the natural numbers."),
        Rule(system=BACK, user="def idf", reply="BACK-BAD: something else."),
        Rule(system=BACK, reply="BACK-OK: the same."),
        Rule(system=NLI, user="BACK-BAD", json={"equivalent": False, "differences": ["all"]}),
        Rule(system=NLI, json={"equivalent": True, "differences": []}),
    ]
    return Script(models=["writer", "trans"], rules=rules)


@pytest.fixture
def informalized(store):
    """The fixture library with informalize's output, written by the fake model."""
    with store.session() as s:
        add_model(s, "writer", provider="fake")
        add_model(s, "trans", provider="fake")
    opts = InformalizeOptions(model="writer", translator="trans")
    with FakeServer(script()) as srv:
        summary = asyncio.run(
            run_informalize(Settings(llm=LLMSettings(base_url=srv.base_url)), store, opts)
        )
    assert summary.done > 2
    return store


def _text_of(store, name: str) -> int:
    from math2.store import Mention

    with store.session() as s:
        return s.scalar(
            select(AgentText.id).join(Mention, Mention.id == AgentText.mention_id)
            .where(Mention.name == name, AgentText.kind == "informal_statement")
        )  # fmt: skip


def test_informal_text_is_a_part_shown_with_its_origin(informalized, tmp_path, monkeypatch):
    root = tmp_path / "index"
    meta = build_index(informalized, root / "mathlib", "mathlib", dense=False)
    assert meta["descriptions"] >= 3
    ix = SearchIndex(root / "mathlib")
    assert ix.search(QUERY, k=1)[0].name == TARGET
    without = ix.search(QUERY, k=1, parts=tuple(p for p in PARTS if p != "desc"))
    assert not without or without[0].name != TARGET  # the informal part found it
    # the one text the role's checks did not accept (its back-translation) is not indexed
    assert ix.search("zorblax", k=1, parts=("desc",)) == []
    # the learned ranker reads the part's rank
    [r] = ix.rankings([QUERY])
    cands, rows = candidate_features(ix, QUERY, r, {})
    point = cands.tolist().index(ix.names.index(TARGET))
    assert rows[point, FEATURES.index("desc_rank")] < RANK_MISSING

    [hit] = Searcher(root).search(QUERY, "mathlib", 1)
    assert hit.informal is not None and hit.informal.text == POINT
    assert hit.informal.provenance is Provenance.UNREVIEWED
    assert hit.informal.origin == "written by writer (informalize), not reviewed by a person"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'none.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(root))
    res = CliRunner().invoke(cli, ["search", QUERY, "-k", "1"])
    assert "+ informal texts" in res.stderr  # the searched line names the part
    shown = res.output
    assert f"informal: {POINT} (written by writer (informalize), not reviewed" in shown
    [row] = json.loads(CliRunner().invoke(cli, ["search", QUERY, "-k", "1", "--json"]).stdout)
    assert (row["informal"], row["informal_origin"]) == (POINT, hit.informal.origin)


def test_a_persons_decision_is_what_the_hit_says(informalized, tmp_path) -> None:
    with informalized.session() as s:
        decide_agent_text(s, _text_of(informalized, TARGET), Decision.CONFIRM, "ann", "ok")
        s.commit()
    build_index(informalized, tmp_path / "ix" / "mathlib", "mathlib", dense=False)
    [hit] = Searcher(tmp_path / "ix").search(QUERY, "mathlib", 1)
    assert hit.name == TARGET and hit.informal is not None
    assert hit.informal.provenance is Provenance.REVIEWED
    assert hit.informal.origin.endswith("confirmed by a person")
    # an edit replaces the model's words (the person's text is node text): out of the part
    with informalized.session() as s:
        decide_agent_text(s, _text_of(informalized, "Demo.two_eq"), Decision.EDIT, "ann", "fix",
                          edited_body="Two is one plus one.")  # fmt: skip
        s.commit()
    meta = build_index(informalized, tmp_path / "ix2" / "mathlib", "mathlib", dense=False)
    ix = SearchIndex(tmp_path / "ix2" / "mathlib")
    two = ix.names.index("Demo.two_eq")
    assert two not in ix.desc_pos.tolist() and ix.names.index(TARGET) in ix.desc_pos
    assert meta["descriptions"] == len(ix.desc_pos)


def test_a_few_texts_do_not_take_the_fusions_top() -> None:
    """The fusion weighs the informal part by the share of declarations it holds a text for:
    a text's first place among 12 documents is no first place among 280,000, and 12 texts at
    full weight took a top-10 place in 677 of 1,003 dev queries (docs/benchmarks.md, inf45)."""
    import numpy as np

    from math2.retrieval.stage import W_DESC, FusionWeights, Rankings, desc_weight, fuse

    r = Rankings(lexical=np.array([1, 2, 3]), desc=np.array([9]))  # 9: the only text's holder
    few = FusionWeights(dense=0, namesake=0, nameparts=0, glosses=0, desc=desc_weight(12, 280_000))
    scores = fuse(r, few, np.zeros(10))
    assert sorted(scores, key=lambda p: -scores[p])[:3] == [1, 2, 3]
    assert desc_weight(280_000, 280_000) == W_DESC == desc_weight(300_000, 280_000)
    assert desc_weight(140_000, 280_000) == W_DESC / 2 and desc_weight(0, 0) == 0.0


def test_the_index_weighs_its_informal_part_by_its_coverage(informalized, tmp_path) -> None:
    from math2.retrieval.stage import W_DESC

    meta = build_index(informalized, tmp_path / "ix" / "mathlib", "mathlib", dense=False)
    ix = SearchIndex(tmp_path / "ix" / "mathlib")
    w = ix.fusion_weights(0.0, 1.0)
    assert 0 < w.desc == W_DESC * meta["descriptions"] / len(ix) <= W_DESC
