"""Index text v2: LaTeX to Mathlib's notation, split identifiers, symbol tokens; informal
descriptions as their own part; the v1 baseline still builds and searches."""

import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.text import (
    FOLD_VERSION,
    TEXT_VERSION,
    document_phrases,
    document_text,
    fold,
    fold_accents,
    latex_to_unicode,
    phrases,
    prose_tokens,
    query_phrases,
    query_tokens,
    split_identifier,
    tokens,
)
from math2.sources import load_manifest, sync_manifest
from math2.store import AgentText, Mention
from math2.store.models import ModelEntry
from tests.conftest import REPO
from tests.retrieval.test_english import _index_with

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def test_latex_becomes_mathlib_notation() -> None:
    assert latex_to_unicode(r"$a \sqcup b \le c$").split() == ["a", "⊔", "b", "≤", "c"]
    assert latex_to_unicode(r"\mathbb{R}").strip() == "ℝ"
    assert {"∑", "∈", "ℕ"} <= set(latex_to_unicode(r"\sum_{i} x_i \in \mathbb N").split())
    assert "∫" in latex_to_unicode(r"\int_0^1 f") and "∞" in latex_to_unicode(r"\infty")


def test_query_reads_latex_as_lean_only() -> None:
    toks = query_tokens(r"x \le y in \mathbb{R}")
    assert {"le", "≤", "ℝ", "real"} <= set(toks)
    assert "mathbb" not in toks  # the command is no word (issue 45 §2: it was)
    assert len(toks) == len(set(toks))


def test_identifiers_split_and_kept_whole() -> None:
    assert split_identifier("Nat.Prime.two_le") == ["nat", "prime", "two", "le"]
    assert split_identifier("IsOpen") == ["is", "open"]
    assert split_identifier("HTTPServer") == ["http", "server"]
    toks = tokens("Nat.Prime.two_le holds for ℕ")
    assert {"nat.prime.two_le", "prime", "two", "le", "holds", "ℕ", "nat"} <= set(toks)
    assert "for" not in toks  # stop word


def test_document_text_fields() -> None:
    t = document_text(
        "Nat.Prime.two_le", "{p : ℕ} (hp : p.Prime) : 2 ≤ p", "Primes are ≥ 2.",
        "Mathlib.Data.Nat.Prime.Defs",
    )  # fmt: skip
    assert t.startswith("Nat.Prime.two_le {p : ℕ}")
    assert "Data Nat Prime Defs" in t and "Primes are ≥ 2." in t


def test_v3_finds_notation_and_v1_still_builds(store, tmp_path: Path) -> None:
    v2 = SearchIndex(Path(build_index(store, tmp_path / "v2", dense=False) and tmp_path / "v2"))
    # v6 accents folded, v7 shapes, v8 aliases, v9 issue 33's levers
    assert v2.text_version == TEXT_VERSION == 9
    hits = v2.search(r"$a + b = b + a$ for $a, b \in \mathbb{N}$", k=3, parts=("bm25",))
    assert hits[0].name in ("Demo.add_comm'", "Demo.add_comm_old")
    build_index(store, tmp_path / "v1", dense=False, text_version=1)
    v1 = SearchIndex(tmp_path / "v1")
    assert v1.text_version == 1 and v1.search("identity function", k=1)[0].name == "Demo.idf"
    assert v2.search("zzzz qqqq", k=3) == []  # nothing known: no hit, no error


def test_hidden_docstrings_are_not_indexed(store, tmp_path: Path) -> None:
    with store.session() as s:
        idf = s.scalar(select(Mention).where(Mention.name == "Demo.idf"))
    query = "The identity, as a definition"
    build_index(store, tmp_path / "a", dense=False)
    assert SearchIndex(tmp_path / "a").search(query, k=1)[0].name == "Demo.idf"
    build_index(store, tmp_path / "b", dense=False, hide_docstrings={idf.id})
    assert "Demo.idf" not in [h.name for h in SearchIndex(tmp_path / "b").search(query, k=1)]


def test_descriptions_are_a_part_of_their_own(store, tmp_path: Path) -> None:
    with store.session() as s:
        point = s.scalar(select(Mention).where(Mention.name == "Demo.Point"))
        model = ModelEntry(name="test-model", revision="1")
        s.add(model)
        s.flush()
        for status in ("pending", "rejected"):
            s.add(
                AgentText(
                    kind="description",
                    body="a location in the cartesian plane given by two coordinates"
                    if status == "pending"
                    else "an idempotent endomorphism",
                    mention_id=point.id,
                    model_id=model.id,
                    template_id="informalize/description",
                    template_hash="0" * 64,
                    status=status,
                )
            )
        s.commit()
    meta = build_index(store, tmp_path / "ix", dense=False)
    assert meta["descriptions"] == 1  # the rejected one is not used
    ix = SearchIndex(tmp_path / "ix")
    assert ix.search("cartesian plane coordinates", k=1)[0].name == "Demo.Point"
    assert ix.search("cartesian plane coordinates", k=1, parts=("bm25",)) == []
    assert ix.search("idempotent endomorphism", k=1, parts=("desc",)) == []


def test_informalize_output_is_a_search_aid(store, tmp_path: Path) -> None:
    """An informal statement the informalize role wrote is searchable the moment it exists."""
    with store.session() as s:
        point = s.scalar(select(Mention).where(Mention.name == "Demo.Point"))
        model = ModelEntry(name="test-model", revision="1")
        s.add(model)
        s.flush()
        s.add(
            AgentText(
                kind="informal_statement",
                body="a location in the cartesian plane given by two coordinates",
                mention_id=point.id,
                model_id=model.id,
                template_id="informalize/statement@1",
                template_hash="0" * 64,
            )
        )
        s.commit()
    meta = build_index(store, tmp_path / "ix", dense=False)
    assert meta["descriptions"] == 1
    assert SearchIndex(tmp_path / "ix").search("cartesian plane", k=1)[0].name == "Demo.Point"


def test_prior_only_with_a_dense_part(store, tmp_path: Path) -> None:
    build_index(store, tmp_path / "ix", dense=False)
    ix = SearchIndex(tmp_path / "ix")
    plain = ix.search("identity", k=3)
    assert plain[0].score == pytest.approx(1 / 61)  # BM25 rank 1, no prior factor
    weighted = ix.search("identity", k=3, prior_weight=0.25)
    assert weighted[0].score == pytest.approx(1 / 61 * (1 + 0.25 * weighted[0].prior))


def test_phrases_pair_adjacent_words() -> None:
    assert phrases("Fundamental theorem of algebra") == ["fundamental_theorem", "theorem_algebra"]
    assert document_phrases("Complex.exists_root", None) == ["complex_exists", "exists_root"]
    toks, short = query_phrases("fundamental theorem of algebra")
    assert toks == ["fundamental_theorem", "theorem_algebra"] and short == 0.5
    _, long = query_phrases(
        "every polynomial of positive degree over the complex numbers has a root"
    )
    assert 0 < long < short  # adjacent words weigh less in a long description


DECOY = """
/-- The fundamental group, with its algebra of loops. -/
def FundamentalGroup.fundamental (X : Type) : Type := X

theorem FundamentalGroup.fundamental_fundamental (X : Type) :
    FundamentalGroup.fundamental X = X := rfl
"""

ROOT = """
/-- **Fundamental theorem of algebra**: every non-constant complex polynomial has a root. -/
theorem Complex.exists_root {f : Polynomial ℂ} (hf : 0 < Polynomial.degree f) :
    ∃ z : ℂ, Polynomial.IsRoot f z := by
  sorry
"""


def test_phrase_part_puts_the_named_theorem_first(sqlite_store, tmp_path: Path) -> None:
    """The `math2 search "fundamental theorem of algebra"` defect: module and name words made
    short declarations about fundamental groups outrank the theorem whose docstring is that
    phrase; with the phrase part (index text v3) the theorem comes first."""
    tree = tmp_path / "lean"
    shutil.copytree(FIX, tree)
    # Mathlib's statistics in miniature: many declarations say "fundamental", "theorem" or
    # "algebra" (so each word alone is weak evidence), few say them in that order.
    filler = "\n".join(
        f"/-- A {w} lemma, number {i}. -/\ntheorem Filler.{w}_{i} : True := trivial\n"
        for i in range(20)
        for w in ("fundamental", "theorem", "algebra")
    )
    for rel, body in (
        ("Mathlib/Filler.lean", filler),
        ("Mathlib/Algebra/FundamentalGroup/Fundamental.lean", DECOY),
        ("Mathlib/Analysis/Complex/Polynomial/Basic.lean", ROOT),
    ):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(body)
    store = sqlite_store
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(store, manifest.get("mathlib"), tree)
    query = "fundamental theorem of algebra"
    build_index(store, tmp_path / "v2", dense=False, text_version=2)
    build_index(store, tmp_path / "v3", dense=False)
    v2 = [h.name for h in SearchIndex(tmp_path / "v2").search(query, k=5, parts=("bm25",))]
    v3 = [h.name for h in SearchIndex(tmp_path / "v3").search(query, k=5, parts=("bm25",))]
    assert v2[0] != "Complex.exists_root"  # the defect, reproduced
    assert v3[0] == "Complex.exists_root"


def test_dense_text_puts_words_before_notation() -> None:
    """The encoder reads 64 tokens: the name's words and the docstring come first."""
    from math2.retrieval.text import dense_text

    t = dense_text("Complex.exists_root", "∀ {f : ℂ[X]}, 0 < degree f → ∃ z, IsRoot f z",
                   "**Fundamental theorem of algebra**: a polynomial has a root")  # fmt: skip
    assert t.startswith("complex exists root. **Fundamental theorem of algebra**")
    assert t.endswith("IsRoot f z")
    assert dense_text("Nat.succ_le", None, None) == "nat succ le."


def test_accents_fold_for_latin_letters_only() -> None:
    assert fold_accents("Bézout, Hölder, Łoś, Erdős, ﬁnite") == "Bezout, Holder, Los, Erdos, finite"
    # Greek letters, blackboard and script letters, subscripts, superscripts, notation: kept.
    notation = "∀ α β : ℝ, xᵢ ≤ ∑ i, ‖f i‖² → 𝕜 ℓ ℕ ⁻¹ ∈ ⊔ ἀ Γ"
    assert fold_accents(notation) == notation
    assert fold("Schröder") == "Schroder Schroeder"  # the German second form
    assert fold("Bézout") == "Bezout"  # no umlaut: no second form
    assert fold("plain ASCII") == "plain ASCII"


def test_accented_words_become_tokens() -> None:
    assert prose_tokens("Bézout", folded=True)[0] == ["bezout"]
    assert prose_tokens("Bézout")[0] == []  # index text v5 and before: the old reading
    toks = tokens("**Schröder–Bernstein** for α : ℝ", stemmed=True, folded=True)
    assert {"schroder", "schroeder", "bernstein", "α", "ℝ", "real"} <= set(toks)
    assert "schröder" not in toks
    assert "schröder" in tokens("Schröder", stemmed=True)  # v5 keeps the accent
    assert {"schroder_bernstein", "schroeder_bernstein"} <= set(
        phrases("Schröder–Bernstein theorem", stemmed=True, folded=True)
    )
    for q in ("Bezout", "Bézout"):
        assert query_tokens(q, True, True) == ["bezout"]


ACCENTS = """
/-- **Bézout's lemma**: the gcd is a linear combination. -/
theorem Nat.gcd_eq_gcd_ab (x y : Int) : x = x := sorry

/-- The **Schröder–Bernstein theorem**: injections both ways give a bijection. -/
theorem Function.Embedding.antisymm_of_inj (n : Nat) : n = n := sorry

/-- A lemma about gcd and linear maps. -/
theorem Filler.gcd_linear (x : Int) : x = x := sorry

/-- Injections and bijections of a theorem. -/
theorem Filler.theorem_inj (n : Nat) : n = n := sorry
"""


def test_accented_docstrings_found_without_accents(sqlite_store, tmp_path: Path) -> None:
    """A docstring says "Bézout" and "Schröder"; queries typed without accents, or with
    Mathlib's `oe`, find them in an index of the current version (and not in v5)."""
    _index_with(sqlite_store, tmp_path, ACCENTS)  # the current version at `ix`
    build_index(sqlite_store, tmp_path / "v5", dense=False, text_version=FOLD_VERSION - 1)
    now, v5 = SearchIndex(tmp_path / "ix"), SearchIndex(tmp_path / "v5")
    schroeder = "Function.Embedding.antisymm_of_inj"
    for query, want in (
        ("Bezout's lemma", "Nat.gcd_eq_gcd_ab"),
        ("Bézout's lemma", "Nat.gcd_eq_gcd_ab"),
        ("Schroeder-Bernstein theorem", schroeder),
        ("Schroder Bernstein", schroeder),
        ("Schröder–Bernstein", schroeder),
    ):
        assert now.search(query, k=1)[0].name == want, query
    assert now.folded and not v5.folded
    assert [h.name for h in v5.search("Bezout", k=3)] == []
    assert [h.name for h in v5.search("Schroeder", k=3)] == []


def test_the_fold_table_keeps_only_latin_letters() -> None:
    from math2.retrieval.text import _FOLD, fold_accents

    before = len(_FOLD)
    text = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 2000))  # untrusted query text
    assert fold_accents(text) == text and len(_FOLD) <= before + 1
    assert fold_accents("Bézout ℝ") == "Bezout ℝ"
