"""The formula-shape part (index text v7): shape tokens of statements and query formulas, the
`shape/` part built beside `phrase/`, and its score lifting the general lemma of a special case."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.shape import (
    formula_text,
    is_short_variable,
    query_shape,
    shape_sequence,
    shape_tokens,
)
from math2.retrieval.text import SHAPE_VERSION
from tests.retrieval.test_english import _index_with


def test_special_case_shares_the_general_shape() -> None:
    special = set(shape_tokens("2 + 3 = 3 + 2"))
    general = set(shape_tokens(": ∀ a b : G, a + b = b + a"))
    assert "v1 + v2 = v2" not in general  # numbered in each gram: `b + a` is `v1 + v2`
    assert {"v1 + v2 =", "+ v1 = v1", "v1 = v1 +", "= v1 + v2"} <= special & general
    # other variable names, the same shape
    assert set(shape_tokens("x + y = y + x")) == general
    # equal operands stay visible: `a * a` is not `a * b`
    assert "v1 * v1" in shape_tokens("a * a = a ^ 2")
    assert "v1 * v1" not in shape_tokens("a * b = b * a")


def test_statement_reading() -> None:
    # binders bind, hypotheses enter as `T →`, dot notation is an application, namespaces go
    assert shape_sequence("{p : ℕ} (hp : p.Prime) : 2 ≤ p") == [
        "Prime", "·vp", "→", "2", "≤", "·vp",
    ]  # fmt: skip
    assert shape_sequence("Nat.Prime p → 2 ≤ p") == shape_sequence("{p : ℕ} (hp : p.Prime) : 2 ≤ p")
    # a long bound name is a variable; numerals beyond 0, 1, 2 are `#` in the literal layer
    assert shape_sequence("(count : ℕ) : count + 7 = 7 + count") == [
        "·vcount", "+", "#7", "=", "#7", "+", "·vcount",
    ]  # fmt: skip
    assert "v1 + #" in shape_tokens("(count : ℕ) : count + 7 = 7 + count")
    assert is_short_variable("x₁") and is_short_variable("hf") and is_short_variable("α")
    assert not is_short_variable("π") and not is_short_variable("if")
    assert not is_short_variable("exp") and not is_short_variable("ℝ")
    assert shape_tokens(None) == [] and shape_tokens("/- unterminated") == []


def test_prose_gives_no_shape() -> None:
    assert query_shape("infinitely many primes") == ([], 1.0 - 1.0)
    assert shape_tokens(formula_text("the sum of two squares")) == []
    assert formula_text("if p is prime then 2 ≤ p") == "2 ≤ p"
    toks, formula = query_shape("|a + b| ≤ |a| + |b|")
    assert formula == 1.0 and "| v1 + v2" in toks
    # LaTeX is read after its conversion to Mathlib's notation
    latex, _ = query_shape(r"$\|x + y\| \le \|x\| + \|y\|$")
    assert set(latex) == set(shape_tokens("‖x + y‖ ≤ ‖x‖ + ‖y‖"))


def test_order_and_latex_read_as_mathlib_writes() -> None:
    # `≥`/`>` read as `≤`/`<` with the sides swapped; binder predicates are left alone
    assert shape_sequence("x ≥ 0") == ["0", "≤", "·vx"]
    assert shape_sequence("a > b → b < a") == ["·vb", "<", "·va", "→", "·vb", "<", "·va"]
    assert shape_sequence("∃ x > 0, x = 1")[:3] == ["∃", "·vx", ">"]
    # LaTeX: fractions, brace groups, `e^`, products written side by side
    assert formula_text(r"$\frac{1}{n^{2}}$") == "( 1 ) / ( n ^ 2 )"
    assert formula_text(r"$e^{x+y} = e^x e^y$") == "exp ( x + y ) = exp x * exp y"
    assert formula_text(r"$\log(xy) = \log x + \log y$") == "log ( x * y ) = log x + log y"
    assert formula_text("x^2 + y^2 ≥ 2xy") == "x ^ 2 + y ^ 2 ≥ 2 * x * y"
    lean = "(a b : α) : 2 * a * b ≤ a ^ 2 + b ^ 2"
    assert shape_tokens(formula_text("x^2 + y^2 ≥ 2xy")) == shape_tokens(lean)


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab xy12(){}[]$\\^_=+-*/≤≥<>→∀∃,:|‖'\"fracdegt")), max_size=60
    )
)
def test_any_text_gives_tokens_without_error(text: str) -> None:
    """Queries are untrusted: unbalanced LaTeX, brackets, strings never raise."""
    toks, formula = query_shape(text)
    assert all(isinstance(t, str) and t and "\n" not in t for t in toks)
    assert 0.0 <= formula <= 1.0
    assert isinstance(shape_tokens(text), list)


DECLS = """
theorem add_comm {G : Type} [Add G] : ∀ a b : G, a + b = b + a := sorry
theorem mul_comm {G : Type} [Mul G] : ∀ a b : G, a * b = b * a := sorry
theorem add_assoc {G : Type} [Add G] : ∀ a b c : G, a + b + c = a + (b + c) := sorry
theorem add_zero {G : Type} [Add G] (a : G) : a + 0 = a := sorry
/-- Two and three. -/
theorem Nat.add_three_two_le : 3 ≤ 3 + 2 ∧ 2 ≤ 2 + 3 := sorry
theorem Nat.two_lt_three : 2 < 3 := sorry
"""


def test_shape_part_lifts_the_general_lemma(sqlite_store, tmp_path: Path) -> None:
    _index_with(sqlite_store, tmp_path, DECLS)  # the current version (v7) at `ix`
    build_index(sqlite_store, tmp_path / "older", dense=False, text_version=SHAPE_VERSION - 1)
    cur = SearchIndex(tmp_path / "ix", shape_weight=1.0)
    older = SearchIndex(tmp_path / "older", shape_weight=1.0)
    assert (tmp_path / "ix" / "shape" / "params.json").exists()
    assert cur.shape is not None and "shapes" in cur.parts_built()
    query = "2 + 3 = 3 + 2"
    cur.shape_weight = 0.0
    plain = [h.name for h in cur.search(query, k=10, parts=("bm25",))]
    assert plain.index("add_comm") > plain.index("Nat.add_three_two_le")  # the decoy first
    cur.shape_weight = 1.0
    shaped = [h.name for h in cur.search(query, k=5, parts=("bm25",))]
    assert shaped[0] == "add_comm"
    # a sentence is untouched by the part (its formula share is 0)
    sentence = "addition of natural numbers commutes"
    cur.shape_weight = 0.0
    before = [h.name for h in cur.search(sentence, k=5, parts=("bm25",))]
    cur.shape_weight = 1.0
    assert [h.name for h in cur.search(sentence, k=5, parts=("bm25",))] == before
    # an index without the part (an older version) still searches, the shape weight ignored
    assert not (tmp_path / "older" / "shape" / "params.json").exists()
    assert older.shape is None and "shapes" not in older.parts_built()
    shaped_older = [h.name for h in older.search(query, k=10, parts=("bm25",))]
    older.shape_weight = 0.0
    assert shaped_older == [h.name for h in older.search(query, k=10, parts=("bm25",))]


def test_accented_prose_is_prose() -> None:
    assert query_shape("théorème de Bézout")[0] == []
    assert query_shape("théorème de Bézout", folded=False)[0] != []  # before v6 indexes
