"""Issue 45 §1: a reader's words find Mathlib's names, on an index written for math2 holding
the targets and look-alike distractors (tests/fixtures/searchproj: docstrings that share the
query's words, names that share one of its parts)."""

from pathlib import Path

import pytest

from math2.retrieval.index import (
    W_GLOSSES_MEASURED,
    W_PARTS_MEASURED,
    SearchIndex,
    build_index,
)
from tests.retrieval.conftest import library_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "searchproj"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("words")
    store = library_store(folder, FIX)
    build_index(store, folder / "index", "mathlib", mathlib_dir=FIX)
    # the lever on at its measured weights (off by default: it cost over all of Mathlib)
    return SearchIndex(
        folder / "index", parts_weight=W_PARTS_MEASURED, glosses_weight=W_GLOSSES_MEASURED
    )


def top(index: SearchIndex, query: str, k: int = 3) -> list[str]:
    return [h.name for h in index.search(query, k)]


def test_derivative_of_a_product(index) -> None:
    assert "deriv_mul" in top(index, "derivative of a product of two functions")


def test_group_homomorphism(index) -> None:
    assert "MonoidHom" in top(index, "group homomorphism")


def test_a_latex_sum(index) -> None:
    found = top(index, r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$")
    assert {"Finset.sum_range_id_mul_two", "Finset.sum_range_id"} & set(found), found


def test_a_symbol_names_a_declaration_only_where_its_notation_is_global(index) -> None:
    """`⇒` is `Relator.LiftFun` only where `Relator` is open (scoped notation): an "A ⇒ B"
    query does not summon it as a namesake; `↪` is global notation for `Function.Embedding`."""
    named = [index.name(p) for p, _ in index.levers.namesakes("A ⇒ B", index.prior)]
    assert "Relator.LiftFun" not in named
    named = [index.name(p) for p, _ in index.levers.namesakes("α ↪ β", index.prior)]
    assert "Function.Embedding" in named


def test_one_letter_variables_name_nothing_and_leave_a_symbol_its_namesake(index) -> None:
    """In `H ↪ G` the one-letter words are variables: run together (`hg`) they do not name the
    field `Function.Embedding.Pair.hg`, and they do not dilute the cover of the constant the
    symbol stands for (issue 45, branch qual45f: `G →* H` lost `MonoidHom` to Mathlib's
    `….hg` fields, `X ≃ₜ Y` lost `Homeomorph` below the cover threshold)."""
    assert "Function.Embedding.Pair.hg" in index.names  # the field is indexed
    named = [(index.name(p), c) for p, c in index.levers.namesakes("H ↪ G", index.prior)]
    assert named[:1] == [("Function.Embedding", 1.0)], named
    assert all(not n.endswith(".hg") for n, _ in named), named


def test_one_letter_words_out_of_a_formula_may_name_a_concept(index) -> None:
    """Only a formula's one-letter words are its variables: written without one (`h g`, as
    `L^p` space names `lp` and `H^1` names `H1` in Mathlib) the run-together key still names
    what it names (review of qual45f: the rule had dropped `lp` and `H1` for every query)."""
    named = [index.name(p) for p, _ in index.levers.namesakes("h g", index.prior)]
    assert "Function.Embedding.Pair.hg" in named, named
    named = [index.name(p) for p, _ in index.levers.namesakes("h → g", index.prior)]
    assert "Function.Embedding.Pair.hg" not in named, named


def test_what_counts_as_a_formulas_variable() -> None:
    """One-letter Latin and Greek words and sub/superscript letters are a formula's variables;
    the number sets are words a name covers (`ℝ`: `Real`), and so is any longer word (review
    of qual45f: nothing tested that `ℝ` is not a variable)."""
    from math2.retrieval.levers import _formula, _variable

    assert all(_variable(w) for w in ("x", "G", "α", "φ", "ₜ"))
    assert not any(_variable(w) for w in ("ℝ", "ℂ", "ℕ", "hg", "deriv"))
    assert _formula("G →* H") and _formula("f : G → H") and _formula("a + b = b + a")
    assert not _formula("L^p space") and not _formula("H_1 of a group")
