"""A query's English read in Mathlib's vocabulary (`math2.retrieval.english`)."""

import shutil
from pathlib import Path

from math2.importers.mathlib import import_lean_library
from math2.retrieval import lexscore
from math2.retrieval.english import english_tokens, latex_tokens, mathlib_tokens, mathlib_words
from math2.retrieval.index import SearchIndex, build_index
from math2.sources import load_manifest, sync_manifest
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def _index_with(store, tmp_path: Path, source: str) -> None:
    """The fixture project plus `source` as `Mathlib/Fixture.lean`, imported and indexed at
    `tmp_path / "ix"`."""
    tree = tmp_path / "lean"
    shutil.copytree(FIX, tree)
    (tree / "Mathlib" / "Fixture.lean").write_text(source)
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(store, manifest.get("mathlib"), tree)
    build_index(store, tmp_path / "ix", dense=False)


def test_english_phrases_give_mathlib_words() -> None:
    assert mathlib_words("a prime divides a product") == ["dvd", "prod", "mul"]
    assert mathlib_words("the exponential function is positive") == ["pos", "exp"]
    assert mathlib_words("non-negative squares") == ["nonneg", "sq"]
    assert mathlib_words("a matrix is invertible iff its determinant is a unit") == [
        "det",
        "is",
        "unit",
    ]
    assert "pow" not in mathlib_words("no surjection onto its power set")
    assert mathlib_tokens("strictly increasing") == ["strict", "mono", "monoton"]


def test_the_translated_english_words() -> None:
    """What the discount (`W_TRANSLATED`) applies to: the words of the phrases translated."""
    assert english_tokens("squares are nonnegative") == ["nonneg", "squar"]
    assert english_tokens("compact sets are closed") == []


def test_latex_commands_give_mathlib_words() -> None:
    query = r"$\sum_{k=0}^{n} \binom{n}{k} = 2^n$ in $\mathbb{R}$, $a \leq b$, $p \mid n$"
    assert mathlib_words(query) == ["sum", "choose", "dvd", "le", "real"]
    assert latex_tokens(r"$\binom{n}{k}$") == ["choos"]
    assert mathlib_words(r"$\|e^x\| \le \log y$") == ["le", "norm", "log", "exp"]
    # A command is matched whole: `\left` is not `\le`, `\intercal` not `\int`.
    assert mathlib_words(r"$\left( A^\intercal \right)$") == []


def test_formulas_give_nothing() -> None:
    assert mathlib_words(r"$\sin^2 x + \cos^2 x = 1$") == []
    assert mathlib_words("‖x + y‖ ≤ ‖x‖ + ‖y‖") == []
    assert mathlib_tokens("Nat.Prime p → 2 ≤ p") == []


DECLS = """
/-- The successor of a number is not zero. -/
theorem Filler.succ_ne_zero (n : Nat) : n + 1 ≠ 0 := sorry

theorem Nat.Prime.dvd_mul {p m n : Nat} (pp : p.Prime) : p ∣ m * n ↔ p ∣ m ∨ p ∣ n := sorry

theorem Filler.prime_mul_product {p m n : Nat} (h : p = m * n) : p = m * n := sorry
"""


def test_divides_finds_the_dvd_lemma(sqlite_store, tmp_path: Path) -> None:
    """Nothing of `Nat.Prime.dvd_mul` says "divides": its name and statement say `dvd`/`∣`.
    The query's English "divides" gives `dvd`, which puts it first; without it a declaration
    that only shares "prime" and "product"-like words comes first."""
    _index_with(sqlite_store, tmp_path, DECLS)
    query = "a prime that divides a product of two numbers divides one of them"
    # this lever alone: the name-part ranking reads the same English rows (issue 45 §1)
    with_words = SearchIndex(tmp_path / "ix", parts_weight=0.0, glosses_weight=0.0)
    without = SearchIndex(tmp_path / "ix", synonym_weight=0.0, parts_weight=0.0, glosses_weight=0.0)
    assert with_words.search(query, k=1)[0].name == "Nat.Prime.dvd_mul"
    assert without.search(query, k=1)[0].name != "Nat.Prime.dvd_mul"


SQUARES = """
/-- A commutative square of morphisms. -/
structure CategoryTheory.Square (C : Type) where
  top : C

/-- The square of a square is a square. -/
def CategoryTheory.Square.flip {C : Type} (s : CategoryTheory.Square C) :
    CategoryTheory.Square C := s

/-- Squares of squares are squares; their nonnegative part is a square. -/
def CategoryTheory.Square.nonneg {C : Type} (s : CategoryTheory.Square C) :
    CategoryTheory.Square C := s

theorem sq_nonneg (a : Int) : 0 ≤ a ^ 2 := sorry

theorem Filler.nonneg_one : (0 : Int) ≤ 1 := sorry
"""


def test_translated_english_counts_less(sqlite_store, tmp_path: Path) -> None:
    """ "squares are nonnegative": the word `squares` is all over the category theory squares,
    while `sq_nonneg` says `sq`. The English words of a translated phrase count
    W_TRANSLATED, so the squares lose ground to the lemma, which comes first."""
    _index_with(sqlite_store, tmp_path, SQUARES)
    query = "squares are nonnegative"
    # the namesake prior off: `Square.nonneg` is literally "squares nonnegative" (test_levers)
    now = SearchIndex(tmp_path / "ix", namesake_weight=0.0)
    full = SearchIndex(tmp_path / "ix", translated_weight=1.0, namesake_weight=0.0)
    lemma, decoy = now.names.index("sq_nonneg"), now.names.index("CategoryTheory.Square.nonneg")
    s_now, s_full = now.lexical_scores(query), full.lexical_scores(query)
    assert s_now[decoy] < s_full[decoy]
    assert s_now[lemma] == s_full[lemma]  # its words are the translation, never discounted
    assert now.search(query, k=1)[0].name == "sq_nonneg"


BINOMIAL = """
theorem Nat.sum_range_choose (n : Nat) :
    (Finset.range (n + 1)).sum (fun m => n.choose m) = 2 ^ n := sorry

theorem Filler.two_pow_eq_sum (n k : Nat) (h : ∑ i ∈ Finset.range k, k = 2 ^ k) :
    2 ^ n = 2 ^ n * 1 + 0 * k := sorry
"""


def test_latex_words_score_like_name_words(sqlite_store, tmp_path: Path, monkeypatch) -> None:
    """`\\sum` and `\\binom` already give the tokens `sum`/`choose`; scored again as Mathlib
    words they lift the declaration named with them over one whose statement has `∑` and more
    of the formula's letters and digits. Without that second scoring the filler comes first."""
    _index_with(sqlite_store, tmp_path, BINOMIAL)
    query = r"$\sum_{k=0}^{n} \binom{n}{k} = 2^n$"
    # this lever alone (the filler's shape is the formula's; name parts read the same words)
    ix = SearchIndex(tmp_path / "ix", shape_weight=0.0, parts_weight=0.0)
    assert ix.search(query, k=1)[0].name == "Nat.sum_range_choose"
    monkeypatch.setattr(lexscore, "latex_tokens", lambda q: [])
    assert ix.search(query, k=1)[0].name != "Nat.sum_range_choose"


def test_acronyms_and_name_variants_give_mathlib_words() -> None:
    assert mathlib_words("IVT") == ["intermediate", "value"]
    assert mathlib_words("ivt for continuous maps")[:2] == ["intermediate", "value"]
    assert mathlib_words("FTC") == ["fundamental", "theorem", "calculus"]
    assert mathlib_words("CRT") == ["chinese", "remainder"]
    assert mathlib_words("AM-GM") == mathlib_words("AM–GM") == ["arith", "mean", "geom"]
    assert mathlib_words("every PID is a UFD") == ["principal", "ideal", "unique", "factorization"]
    # Accents folded before the table reads the query; Mathlib spells `lhopital`.
    for q in ("L'Hôpital's rule", "l'hopital", "L'Hospital rule"):
        assert mathlib_words(q) == ["lhopital"], q
    assert mathlib_words("Pythagoras theorem") == ["pythagorean"]
    for q in ("Cantor-Bernstein", "Cantor–Schröder–Bernstein", "Schroder-Bernstein"):
        assert mathlib_words(q) == ["schroeder", "bernstein"], q
    assert mathlib_words("Mobius inversion") == ["moebius"]
    assert mathlib_words("chinese remainder thm") == ["theorem"]
    # Whole words only: `pid` inside `stupid`, `ivt` inside a name, `flat`, `lemma` give nothing.
    assert mathlib_words("a stupid flat lemma") == []


def test_complement_and_subset_rows() -> None:
    assert mathlib_words("the complement of the complement of A is A") == ["compl"]
    assert mathlib_words("A is contained in B") == ["subset"]
    assert mathlib_words("a subset of a finite set") == ["subset"]
    assert english_tokens("A is contained in B") == ["contain"]


def test_an_operations_english_word_gives_both_of_mathlibs_words() -> None:
    """ "sum" is no word of Mathlib's names for it: it gives the pair Mathlib uses (`sum`/`add`),
    and the name-part ranking counts the pair as one thing, as it counts `prod`/`mul` for
    "product"; "difference" and "quotient" map to no pair (not kept: "symmetric difference",
    "quotient group" misread), "quotient of" stays division."""
    from math2.retrieval.nameparts import query_terms

    assert mathlib_words("the sum of two squares") == ["sq", "sum", "add"]
    assert mathlib_words("Gauss summation formula") == ["sum", "add"]
    assert mathlib_words("quotient of two numbers") == ["div"]
    assert mathlib_words("symmetric difference of two sets") == []
    assert mathlib_words("lifting a homomorphism to the quotient group") == ["hom"]
    assert mathlib_words("division by zero") == ["div"]
    # whole words: "summit" says none of them
    assert mathlib_words("summit of a differentiable function") == []
    assert query_terms("the sum of the first n odd numbers") == [["sum", "add"]]
    assert query_terms("a sum of products") == [["prod", "mul"], ["sum", "add"]]


ACRONYMS = """
/-- **Intermediate Value Theorem** for continuous functions on connected spaces. -/
theorem IsPreconnected.intermediate_value {a b : Nat} (h : a ≤ b) : a ≤ b := sorry

/-- The value at the middle of an interval. -/
theorem Filler.ivt_value (n : Nat) : n = n := sorry

theorem Filler.other (n : Nat) : n + 0 = n := sorry
"""


def test_an_acronym_finds_the_theorem(sqlite_store, tmp_path: Path) -> None:
    """ "IVT" is no token of the index's text; its row gives `intermediate value`, which puts
    the theorem first. Without the Mathlib words the query finds nothing relevant."""
    _index_with(sqlite_store, tmp_path, ACRONYMS)
    hits = SearchIndex(tmp_path / "ix").search("IVT", k=1)
    assert hits and hits[0].name == "IsPreconnected.intermediate_value"
    without = SearchIndex(tmp_path / "ix", synonym_weight=0.0).search("IVT", k=1)
    assert not without or without[0].name != "IsPreconnected.intermediate_value"
