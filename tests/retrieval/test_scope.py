"""Issue 24: default scope and merging across libraries, search aids (never node text), stems,
and the memory-mapped lexical index."""

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from math2.retrieval import aids, lexical
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.scope import (
    built_libraries,
    default_library,
    lean_project_library,
    search_libraries,
)
from math2.retrieval.text import query_tokens, tokens
from math2.store import Mention, Node, TextRecord
from tests.retrieval.conftest import link_node

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"
MAIN_RESULT = "addition commutes, stated again."  # the fixture's "Main results" bullet


@pytest.fixture
def indexes(two_libraries) -> dict[str, SearchIndex]:
    return {n: SearchIndex(f) for n, f in built_libraries(two_libraries[1]).items()}


def test_a_mathlib_query_over_all_libraries_puts_mathlib_first(indexes) -> None:
    # Reciprocal-rank scores tie every library's first hit; the merged score does not, even
    # when the tie-break favours set.mm.
    for first in ("mathlib", "setmm"):
        hits = search_libraries(indexes, "Demo.two_eq (2 : ℕ) = 1 + 1", 4, first=first)
        assert (hits[0].library, hits[0].hit.name) == ("mathlib", "Demo.two_eq"), hits
        setmm = [h.score for h in hits if h.library == "setmm"]
        assert setmm and max(setmm) < hits[0].score
    # …and a set.mm-style query is answered from set.mm first, even with Mathlib preferred
    hits = search_libraries(indexes, "one plus one equals two ( 1 + 1 ) = 2", 4, first="mathlib")
    assert (hits[0].library, hits[0].hit.name) == ("setmm", "1p1e2"), hits


def test_default_library(tmp_path: Path) -> None:
    built = {"mathlib": tmp_path / "m", "setmm": tmp_path / "s"}
    assert default_library(built, tmp_path) == "mathlib"
    (tmp_path / "lakefile.toml").write_text('name = "setmm"\n[[require]]\nname = "mathlib"\n')
    assert lean_project_library(tmp_path) == "setmm"
    assert default_library(built, tmp_path) == "setmm"
    (tmp_path / "lakefile.toml").unlink()
    (tmp_path / "lakefile.lean").write_text("import Lake\npackage «MyProject» where\n")
    assert lean_project_library(tmp_path) == "MyProject"
    assert default_library(built, tmp_path) == "mathlib"  # a project that uses Mathlib
    assert default_library({"setmm": tmp_path}, tmp_path) == "setmm"
    assert default_library({"a": tmp_path, "b": tmp_path}, tmp_path) is None


def test_main_results_are_aids_never_node_text(store, indexes, tmp_path: Path) -> None:
    ix = indexes["mathlib"]
    # the aid finds the declaration its module docstring names…
    assert ix.search("addition commutes stated again", k=1)[0].name == "Demo.add_comm'"
    # …and without the aids the query does not
    plain = tmp_path / "plain"
    build_index(store, plain, "mathlib")
    # (renames off: the deprecated `Demo.add_comm_old` would be shown as `Demo.add_comm'`)
    hits = SearchIndex(plain, renames=False, parts_weight=0.0).search(
        "addition commutes stated again", k=1
    )  # the aids alone: the name-part ranking reads "addition commutes" as `add_comm`
    assert not hits or hits[0].name != "Demo.add_comm'"
    # the sentence is nowhere in the corpus: not a statement, docstring, text or node title
    with store.session() as s:
        for col in (Mention.statement, Mention.docstring):
            assert s.scalar(select(Mention).where(col.contains("stated again"))) is None
        assert s.scalar(select(TextRecord).where(TextRecord.body.contains("stated again"))) is None
        assert s.scalar(select(Node).where(Node.title.contains("stated again"))) is None
    # nor what search shows of a declaration
    pos = ix.names.index("Demo.add_comm'")
    assert "stated again" not in ix.snippet(pos) and "a + b = b + a" in ix.snippet(pos)


def test_main_result_sentences_and_names() -> None:
    text = (FIX / "Mathlib" / "Algebra" / "Demo.lean").read_text()
    assert aids.main_result_sentences(text) == [
        (["Demo.add_comm'"], "Demo.add_comm': " + MAIN_RESULT)
    ]
    doc = "/-!\n## Main statements\n- `foo`, `Bar.baz` : two\n  lines\n* no name here\n## Tags\n-/"
    assert aids.main_result_sentences(doc) == [(["foo", "Bar.baz"], "foo, Bar.baz : two lines")]
    found = aids.resolve({"baz": ["s1"], "X.foo": ["s2"], "gone": ["s3"]}, ["A.Bar.baz", "X.foo"])
    assert found == {0: ["s1"], 1: ["s2"]}
    names = ["Nat.Prime", "Nat.Prime.two_le", "Nat.Prime.Foo.bar", "Other"]
    parents = aids.parent_docstrings(names, ["p is prime", None, None, "other"])
    assert parents == {1: "p is prime", 2: "p is prime"}


def test_held_out_titles_are_not_aids(store, tmp_path: Path) -> None:
    link_node(store, "Demo.two_eq", "wd:Q0", "Peano's successor lemma")
    build_index(store, tmp_path / "a", "mathlib")
    assert SearchIndex(tmp_path / "a").search("Peano successor lemma", k=1)[0].name == (
        "Demo.two_eq"
    )
    build_index(store, tmp_path / "b", "mathlib", hold_out_aids={"Demo.two_eq"})
    hits = SearchIndex(tmp_path / "b").search("Peano successor lemma", k=1)
    assert not hits or hits[0].name != "Demo.two_eq"


def test_stems_in_documents_and_queries() -> None:
    assert {"prime", "infinit"} <= set(query_tokens("infinitely many primes", stemmed=True))
    assert "nat.prime.two_le" in tokens("Nat.Prime.two_le", stemmed=True)  # whole names kept
    assert set(tokens("continuity", True)) == set(tokens("continuous", True)) == {"continu"}
    assert "prime" not in query_tokens("infinitely many primes")  # version 3: no stems


def test_lexical_index_equals_bm25s(tmp_path: Path) -> None:
    import bm25s

    docs = [["a", "b", "b"], ["b", "c"], ["c", "d", "ℝ"], ["x"]]
    lexical.build(docs, tmp_path / "lx")
    lx = lexical.Lexical(tmp_path / "lx")
    ref = bm25s.BM25()
    ref.index(docs, show_progress=False)
    for q in (["b"], ["c", "ℝ"], ["a", "d", "nope"]):
        want = ref.get_scores([t for t in q if t in ref.vocab_dict])
        assert np.allclose(lx.scores(q), want)
    assert lx.token_id("nope") is None and not lx.scores(["nope"]).any()
    assert list(lx.top(["c", "ℝ"], 5)) == [2, 1]
    assert list(lx.matched(["b", "c"], np.array([0, 1, 3]))) == [1, 2, 0]


def test_an_index_of_an_older_format_says_rebuild(store, tmp_path: Path) -> None:
    build_index(store, tmp_path / "ix", "mathlib")
    (tmp_path / "ix" / "bm25" / "params.json").write_text('{"format": "bm25s"}')
    with pytest.raises(FileNotFoundError, match="rebuild"):
        SearchIndex(tmp_path / "ix")


def test_aids_meet_only_the_english_words_of_a_query() -> None:
    from math2.retrieval.text import prose_tokens

    words, share = prose_tokens("infinitely many primes")
    assert words == ["infinit", "mani", "prime"] and share == 1.0
    assert prose_tokens("Real.exp (x + y) = Real.exp x * Real.exp y") == ([], 0.0)
    assert prose_tokens(r"$\sin^2 x + \cos^2 x = 1$")[0] == []  # LaTeX commands are not prose
    words, share = prose_tokens("Nat.Prime p → 2 ≤ p, the primes")
    assert words == ["prime"] and 0 < share < 1


def test_topics_of_mathlib_maps_are_aids(store, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "mathlib"
    shutil.copytree(FIX, root)
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "undergrad.yaml").write_text(
        "Arithmetic:\n  Peano numerals:\n    doubling the unit: 'Demo.two_eq'\n    gone: ''\n"
    )
    (root / "docs" / "overview.yaml").write_text("broken: [yaml\n")  # unreadable: nothing
    assert aids.topic_names(root) == {"Demo.two_eq": ["doubling the unit (Peano numerals)"]}
    build_index(store, tmp_path / "ix", "mathlib", mathlib_dir=root)
    hits = SearchIndex(tmp_path / "ix").search("doubling the unit", k=1)
    assert hits and hits[0].name == "Demo.two_eq", hits
    # a held-out declaration's topics stay out, and a topic is never node text
    build_index(
        store, tmp_path / "held", "mathlib", mathlib_dir=root, hold_out_aids={"Demo.two_eq"}
    )
    hits = SearchIndex(tmp_path / "held").search("doubling the unit", k=1)
    assert not hits or hits[0].name != "Demo.two_eq"
    with store.session() as s:
        assert s.scalar(select(Node).where(Node.title.contains("doubling"))) is None
        assert s.scalar(select(Mention).where(Mention.docstring.contains("doubling"))) is None
