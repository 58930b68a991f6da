"""A structure's fields beside the query's candidates, and the columns the ranker reads of them
(`retrieval/fieldmap.py`), over an index written for math2 (tests/fixtures/searchproj: its
`MonoidHom` has the fields `toFun`, `map_one'`, `map_mul'`; `AddMonoidHom`, `RingHom`,
`MulEquiv` and `Function.Embedding` a `toFun` each)."""

from pathlib import Path

import numpy as np
import pytest

from math2.retrieval.features import FEATURES, RANK_MISSING, candidate_features
from math2.retrieval.fieldmap import OWNER_TOP, dot_names, extra_fields, field_map, prefix_cover
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.stage import Rankings
from tests.retrieval.conftest import library_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "searchproj"
TO_FUN = {"MonoidHom.toFun", "AddMonoidHom.toFun", "RingHom.toFun", "MulEquiv.toFun",
          "Function.Embedding.toFun"}  # fmt: skip


@pytest.fixture(scope="module")
def ix(tmp_path_factory) -> SearchIndex:
    folder = tmp_path_factory.mktemp("fieldmap")
    store = library_store(folder, FIX)
    build_index(store, folder / "index", "mathlib", mathlib_dir=FIX)
    return SearchIndex(folder / "index", use_ranker=False)


def _at(ix: SearchIndex, *names: str) -> np.ndarray:
    return np.asarray(sorted(ix.names.index(n) for n in names), dtype=np.int64)


def _names(ix: SearchIndex, positions: np.ndarray | list[int]) -> set[str]:
    return {ix.name(p) for p in np.asarray(positions).tolist()}


def test_the_fields_of_the_index_by_owner_and_by_name(ix) -> None:
    fm = field_map(ix)
    assert _names(ix, fm.by_owner["MonoidHom"]) == {
        "MonoidHom.toFun", "MonoidHom.map_one'", "MonoidHom.map_mul'"}  # fmt: skip
    assert _names(ix, fm.by_last["toFun"]) == TO_FUN


def test_a_found_structure_brings_its_fields(ix) -> None:
    """`MonoidHom` in a part's top: its fields join the candidates; a theorem in the top, or a
    structure below every part's `OWNER_TOP`, brings none."""
    hom = _at(ix, "MonoidHom")
    r = Rankings(lexical=hom)
    assert _names(ix, extra_fields(ix, "monoid homomorphism", r, hom)) == {
        "MonoidHom.toFun", "MonoidHom.map_one'", "MonoidHom.map_mul'"}  # fmt: skip
    # a field already among the candidates is not brought twice
    some = _at(ix, "MonoidHom", "MonoidHom.toFun")
    assert _names(ix, extra_fields(ix, "q", Rankings(lexical=some), some)) == {
        "MonoidHom.map_one'", "MonoidHom.map_mul'"}  # fmt: skip
    lemma = _at(ix, "MonoidHom.ker_eq_bot_iff")
    assert len(extra_fields(ix, "q", Rankings(lexical=lemma), lemma)) == 0
    others = np.asarray(
        [p for p in range(len(ix)) if not ix.name(p).startswith("MonoidHom")][:OWNER_TOP]
    )
    far = np.concatenate([others, hom])  # `MonoidHom` just below the top
    assert "MonoidHom.toFun" not in _names(ix, extra_fields(ix, "q", Rankings(lexical=far),
                                                            np.sort(far)))  # fmt: skip


def test_a_variables_dot_brings_the_fields_so_named(ix) -> None:
    lemma = _at(ix, "MonoidHom.ker_eq_bot_iff")
    got = _names(ix, extra_fields(ix, "e.toFun", Rankings(lexical=lemma), lemma))
    assert got == TO_FUN
    assert dot_names("F.obj X") == ["obj"] and dot_names("x₁.val = y'.val") == ["val"]
    # a name is not a variable, nor is a hypothesis's projection a field (`h.1`)
    assert dot_names("Equiv.toFun") == [] and dot_names("h.1 ∧ hf.le") == []
    # nor are an abbreviation's letters (review of fields46, M2)
    assert dot_names("f = g a.e., i.e. almost everywhere, e.g. on ℝ") == []


def test_a_name_word_abbreviates_the_query_word_it_begins() -> None:
    words = ["adjacency", "relation", "simple", "graph"]
    got = prefix_cover(words, ["SimpleGraph.Adj", "SimpleGraph", "Rel"])
    assert got.tolist() == [0.75, 0.5, 0.25]
    # a word shorter than three letters says only itself: `re` is "re", not "real"
    assert prefix_cover(["real", "part"], ["Complex.re"]).tolist() == [0.0]
    assert prefix_cover(["re", "z"], ["Complex.re"]).tolist() == [0.5]
    # a plural name word abbreviates what its singular begins (`elems`: "elements")
    assert prefix_cover(["elements"], ["Fintype.elems"]).tolist() == [1.0]


def test_the_field_columns(ix) -> None:
    """A field of a found structure: its owner's best rank, and how much more of the query its
    name says than its owner's (`toFun`: "function"); the structure itself has no owner."""
    hom = _at(ix, "MonoidHom")
    query = "the underlying function of a monoid homomorphism"
    positions, rows = candidate_features(ix, query, Rankings(lexical=hom), {})
    at = {ix.name(p): dict(zip(FEATURES, rows[j].tolist(), strict=True))
          for j, p in enumerate(positions.tolist())}  # fmt: skip
    field, owner = at["MonoidHom.toFun"], at["MonoidHom"]
    assert field["owner_rank"] == 0.0 and owner["owner_rank"] == RANK_MISSING
    assert field["prefix_cover"] > owner["prefix_cover"] > 0
    assert field["owner_gain"] == field["prefix_cover"] - owner["prefix_cover"]
    assert owner["owner_gain"] == 0.0 and field["dot_field"] == 0.0
    _, rows = candidate_features(ix, "f.toFun", Rankings(lexical=hom), {})
    assert rows[:, FEATURES.index("dot_field")].sum() == len(TO_FUN)
