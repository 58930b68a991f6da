"""Issue 45 §6 (branch cost45b): what the query path computes more cheaply is what it computed
before — the name-word columns in one pass over the candidates, the hits built without
`model_construct`'s per-field lookups, the snippets read at once."""

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, Field

from math2.retrieval import lexical
from math2.retrieval.cards import Card
from math2.retrieval.features import FEATURES, NAME_COLUMNS, _name_columns, candidate_features
from math2.retrieval.index import Hit, SearchIndex, build_index
from math2.retrieval.nameparts import FAMILIES, document_parts, query_groups, query_weights
from math2.retrieval.searcher import SearchHit
from math2.retrieval.text import tokens
from math2.util.construct import construct
from tests.retrieval.conftest import library_store
from tests.retrieval.test_ranker import FIX


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> SearchIndex:
    folder = tmp_path_factory.mktemp("cost")
    build_index(library_store(folder, FIX), folder / "index", "mathlib", mathlib_dir=FIX)
    return SearchIndex(folder / "index", use_ranker=False)


def separate_passes(
    ix: Any, query: str, weights: dict[str, float], names: list[str], cands: np.ndarray
) -> dict[str, np.ndarray]:
    """The name-word columns as 5d70a65 computed them: `Lexical.matched` once per word list
    (the query's words, the mapped ones, their weights, each group), each name read twice."""
    n, parts, mapped = len(cands), ix.levers.parts, list(weights)
    cols = {f: np.zeros(n) for f in NAME_COLUMNS}
    wanted = list(dict.fromkeys([*ix._query_tokens(query), *mapped]))
    if parts is not None and wanted and n:
        hits = parts.matched(wanted, cands)
        own = np.ones(n)
        for j in np.flatnonzero(hits > 0).tolist():
            own[j] = max(1, len(document_parts(names[j])))
        cols["name_cover"] = hits / len(wanted)
        cols["name_extra"] = np.maximum(0.0, own - hits) / own
    if mapped and parts is not None:
        hits = parts.matched(mapped, cands)
        cols["parts_coverage"] = hits / len(mapped)
        for j, name in enumerate(names):
            if hits[j] > 0 or "|" in name or "∣" in name:
                cols["parts_precision"][j] = hits[j] / max(1, len(document_parts(name)))
                ws = document_parts(name.rsplit(".", 1)[-1])
                cols["parts_last"][j] = sum(w in set(mapped) for w in ws) / max(1, len(ws))
        cols["parts_reliable"] = parts.matched(weights, cands) / sum(weights.values())
        groups = query_groups(query, ix.levers.vocabulary_weights, ix.families)
        said = np.zeros(n)
        for g in groups:
            said += parts.matched(g, cands) > 0
        cols["parts_groups"] = said / max(1, len(groups))
    return cols


@pytest.mark.parametrize(
    "query",
    ["derivative of a product of two functions", "group homomorphism", "the product of two "
     "multiplicative functions", r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$", "mul_comm",
     "|x| ≤ 1", "a ∣ b → a ∣ b * c", "zzzz"],
)  # fmt: skip
def test_the_name_word_columns_are_those_of_the_separate_passes(index, query) -> None:
    (r,) = index.rankings([query], terms=True)
    cands, rows = candidate_features(index, query, r, {})
    weights = query_weights(query, index.levers.vocabulary_weights, index.families)
    want = separate_passes(index, query, weights, index.names_at(cands), cands)
    col = {f: i for i, f in enumerate(FEATURES)}
    for f in NAME_COLUMNS:
        got = np.ascontiguousarray(rows[:, col[f]])
        assert got.tobytes() == want[f].astype(np.float64).tobytes(), (query, f)


def test_a_name_with_two_words_of_one_group_says_it_once(tmp_path) -> None:
    """A name part index of names of our own: `Finset.prod_mul_distrib` has both words of
    "product" (`prod`, `mul`), which the group counts once (the fixture has no such name)."""
    names = ["Finset.prod_mul_distrib", "deriv_mul", "Nat.prod_pow", "mul_comm", "zero_add",
             "HasDerivAt.mul", "Real.exp_log"]  # fmt: skip
    lexical.build([list(document_parts(n)) for n in names], tmp_path / "parts")
    ix = SimpleNamespace(
        levers=SimpleNamespace(parts=lexical.Lexical(tmp_path / "parts"), vocabulary_weights=None),
        families=FAMILIES, _query_tokens=lambda q: tokens(q, True, True),
    )  # fmt: skip
    cands = np.arange(len(names))
    for query in ["derivative of a product of two functions", "product of exponentials",
                  "the product of two multiplicative functions", "zzzz"]:  # fmt: skip
        weights = query_weights(query, None, FAMILIES)
        got = _name_columns(ix, query, weights, names, cands)  # type: ignore[arg-type]
        want = separate_passes(ix, query, weights, names, cands)
        for f in NAME_COLUMNS:
            assert got[f].tobytes() == want[f].tobytes(), (query, f)
    assert got["parts_groups"].tolist() == [0.0] * len(names)  # "zzzz": nothing asked
    query = "derivative of a product of two functions"
    got = _name_columns(ix, query, query_weights(query, None, FAMILIES), names, cands)  # type: ignore[arg-type]
    assert got["parts_groups"][0] == 0.5 and got["parts_groups"][1] == 1.0


def test_the_columns_say_something_on_the_fixture(index) -> None:
    """The check above compares columns that are not all zero (a fixture that matched no name
    word would compare nothing)."""
    said = set()
    for query in ["derivative of a product of two functions", "a ∣ b → a ∣ b * c"]:
        (r,) = index.rankings([query], terms=True)
        _, rows = candidate_features(index, query, r, {})
        said |= {f for f in NAME_COLUMNS if rows[:, FEATURES.index(f)].any()}
    assert said == set(NAME_COLUMNS)


def _same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b) and a == b and repr(a) == repr(b)
    assert list(a.__dict__) == list(b.__dict__) and a.__dict__ == b.__dict__
    assert a.model_fields_set == b.model_fields_set and a.model_dump() == b.model_dump()
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__


def test_construct_builds_model_constructs_instance() -> None:
    hit = {"renamed_from": None, "mention_id": 7, "name": "deriv_mul", "score": 0.5,
           "position": 3, "bm25_rank": 1, "dense_rank": None, "prior": 0.25}  # fmt: skip
    fast, slow = construct(Hit, dict(hit)), Hit.model_construct(**hit)
    _same(fast, slow)
    fast.bm25_rank = 2  # each instance has its own set of fields set
    assert Hit.model_construct(**hit).model_fields_set == slow.model_fields_set
    found = {"library": "mathlib", "hit": slow, "score": 1.5, "statement": "a = a",
             "card": Card(kind="theorem"), "declaration": None, "node": None,
             "informal": None}  # fmt: skip
    _same(construct(SearchHit, dict(found)), SearchHit.model_construct(**found))


class _Aliased(BaseModel):
    x: int = Field(0, alias="y")
    z: int = 1


def test_construct_leaves_what_it_does_not_cover_to_model_construct() -> None:
    _same(construct(_Aliased, {"y": 2, "z": 3}), _Aliased.model_construct(y=2, z=3))
    short = {"mention_id": 7, "name": "a", "score": 0.5}  # defaults filled by pydantic
    _same(construct(Hit, dict(short)), Hit.model_construct(**short))
    other = {**short, "position": 1, "bm25_rank": 1, "dense_rank": 1, "prior": 0.0, "x": 1}
    _same(construct(Hit, dict(other)), Hit.model_construct(**other))


def test_the_snippets_read_at_once_are_those_read_one_by_one(index) -> None:
    at = [5, 0, 17, 5, len(index) - 1]
    assert index.snippets(at) == [index.snippet(p) for p in at] and any(index.snippets(at))
    assert index.snippets([]) == []
