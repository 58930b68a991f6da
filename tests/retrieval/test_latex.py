"""Issue 45 §2: LaTeX read as mathematics by a parser (pylatexenc), written as Lean's notation
and Mathlib's words; no LaTeX command ever reaches a query or the index as a word."""

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from math2.retrieval.latex import MACROS, to_lean
from math2.retrieval.text import bar_words, query_tokens, stem, tokens

# Commands whose Mathlib word is their own name (an operator's name, or a table entry).
OWN_WORDS = {"log", "exp", "sin", "cos", "tan", "gcd", "lcm", "det", "dim", "ker", "max", "min",
             "sup", "inf", "limsup", "liminf", "arg", "sinh", "cosh", "tanh", "lg", "ln", "hom",
             "sec", "csc", "cot", "arcsin", "arccos", "arctan", "coth", "Pr", "choose",
             "arcsinh", "arccosh", "arctanh",
             "prod", "sum", "top", "sqrt"}  # ∏ is prod: a symbol's Mathlib word  # fmt: skip


def test_the_issues_examples() -> None:
    assert to_lean(r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$") == (
        "∑ i ∈ Finset.range (n + 1), i = (n(n+1)) / (2)"
    )
    assert to_lean(r"$\sum_{i=1}^{n} a_i$").startswith("∑ i ∈ Finset.Icc 1 n,")
    assert to_lean(r"\left( x \right)") == "( x )"
    assert to_lean(r"$\mathbb{R} \cong \mathbb{C}$") == "ℝ ≃ ℂ"
    assert to_lean(r"$\mu \omega A \Rightarrow B$") == "μ ω A → B"
    assert to_lean(r"$\binom{n}{k} \sqrt{2}$") == "Nat.choose (n) (k) √(2)"
    assert to_lean(r"$\int_0^1 f$") == "∫ x in 0..1, f"
    # Lean is not LaTeX: set difference and `%` stay as written
    assert to_lean("s \\ t ∪ a % b") == "s \\ t ∪ a % b"


def test_operator_names_and_limits_read_as_mathlib_writes_them() -> None:
    """Issue 45, branch qual45f (after reading how `users-latex` is read): operator names that
    latex2text drops are Mathlib's words, an infinite series is `tsum`, an integral's bounds
    are Mathlib's, and `\\pmod` closes its bracket."""
    assert to_lean(r"$\ker \varphi$") == "ker φ"
    assert to_lean(r"$\dim_K V$") == "finrank K V"
    assert to_lean(r"$\det(A) \gcd(a, b)$") == "det (A) gcd (a, b)"
    assert to_lean(r"$A \triangle B$") == "A ∆ B"
    assert to_lean(r"$\sum_{n=0}^{\infty} a_n$") == "∑' n, a n"
    assert to_lean(r"$\sum_{n=1}^{+\infty} a_n$") == "∑' n, a n"  # review of qual45f
    assert to_lean(r"$\prod_{n=1}^\infty a_n$") == "∏' n, a n"  # Mathlib's `tprod`
    assert to_lean(r"$\int_0^\infty f$") == "∫ x in Set.Ioi 0, f"
    assert to_lean(r"$\int_{-\infty}^{\infty} f$") == "∫ x, f"
    assert to_lean(r"$\int_X f \, d\mu$") == "∫ x in X, f d μ"
    assert to_lean(r"$a \equiv b \pmod{n}$") == "a ≡ b [MOD n]"


def test_bars_read_by_context() -> None:
    assert bar_words("{ x | 0 < x }") == ["set"]
    assert bar_words("|x - y| ≤ |x| + |y|") == ["abs"] * 6
    assert bar_words("a | b") == ["dvd"]
    assert "abs" not in query_tokens("{ x | 0 < x }")
    assert "set" in query_tokens(r"$\{ x \in \mathbb{R} \mid x^2 < 2 \}$")


@settings(max_examples=300, deadline=None)
@given(
    name=st.text(string.ascii_letters, min_size=2, max_size=12),
    arg=st.sampled_from(["", "{1}", "{x}{y}", "_{i=0}^{n}", "[2]{z}"]),
)
def test_no_latex_command_becomes_a_word(name: str, arg: str) -> None:
    _no_command_word(name, arg)


def test_no_command_pylatexenc_knows_becomes_a_word() -> None:
    """Every command of latex2text's own table, with each shape of argument: none raises, none
    is left as a command, none leaves its name as a word (`\\ref` was `<ref>`, `\\chapter`
    `CHAPTER:`, `\\title` raised)."""
    from pylatexenc.latex2text import get_default_latex_context_db

    db = get_default_latex_context_db()
    names = {m.macroname for c in db.categories() for m in db.iter_macro_specs([c])}
    names = {n for n in names if n.isalpha() and len(n) >= 2}
    assert len(names) > 500, len(names)  # the table was read
    for name in sorted(names):
        for arg in ["", "{1}", "{x}{y}", "_{i=0}^{n}", "[2]{z}"]:
            _no_command_word(name, arg)


def _no_command_word(name: str, arg: str) -> None:
    query = f"$\\{name}{arg} = 1$ and \\{name} 1"
    lean = to_lean(query)
    assert not re.search(r"\\[A-Za-z]", lean), lean  # a lone `\\` is Lean's set difference
    if name in OWN_WORDS or name in MACROS:
        return
    if len(letter := to_lean(f"\\{name}").strip()) == 1 and letter.isalpha():
        return  # a letter's command (`\\ae` is æ, `\\ss` ß): the letter, folded as typed (ae, ss)
    toks = set(query_tokens(query, stemmed=True, folded=True)) | set(query_tokens(query))
    without = f"${arg} = 1$ and 1"  # what the rest of the query gives (`=` is `eq`)
    toks -= set(query_tokens(without, stemmed=True, folded=True)) | set(query_tokens(without))
    assert name.lower() not in toks and stem(name.lower()) not in toks, (query, lean, toks)
    # (`\\EQ` is nothing, and the query's `=` is the word `eq` whatever the command: hypothesis
    # drew it on branch qual45f)
    assert name.lower() not in set(tokens(lean)) - set(tokens(to_lean(without)))


def test_no_latex_command_becomes_a_word_of_the_index() -> None:
    from math2.retrieval.text import document_phrases, document_text

    doc = r"For $x \in \mathbb{R}$, $\left| x \right| \le \mathrm{e}^{x}$ and \foo \cong."
    words = tokens(document_text("Real.abs_le_exp", "x ≤ y", doc), stemmed=True)
    assert {"ℝ", "≤", "≃"} <= set(words)
    assert not {"left", "right", "mathrm", "mathbb", "foo", "cong"} & set(words), words
    assert not any("mathbb" in p or "left" in p for p in document_phrases("a", doc))


@settings(max_examples=200, deadline=None)
@given(name=st.text(string.ascii_letters, min_size=1, max_size=10))
def test_a_docstrings_commands_never_fail_the_build(name: str) -> None:
    """`commands_out` reads every command alone; one that wants arguments (`\\frac`, which
    stopped a Mathlib build) stands for its operator, an unknown one for nothing."""
    from math2.retrieval.latex import commands_out

    for text in (f"a \\{name} b", f"\\{name}{{1}}{{2}}", f"$\\{name}$"):
        assert "\\" not in commands_out(text)
    assert commands_out(r"$\frac{1}{2}$").split() == ["$", "/", "{1}{2}$"]
