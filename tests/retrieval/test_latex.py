"""Issue 45 §2: LaTeX read as mathematics by a parser (pylatexenc), written as Lean's notation
and Mathlib's words; no LaTeX command ever reaches a query or the index as a word."""

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from math2.retrieval.latex import MACROS, commands_out, to_lean
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


def test_the_leftovers_of_the_last_stop() -> None:
    """Branch latex46: an integral from -∞ is over `Set.Iic`, `\\pmod p` without braces closes
    its bracket, a normal subgroup is `Subgroup.Normal` (Mathlib's `⊴` is a graph's), `\\aleph_0`
    is Mathlib's `ℵ₀`."""
    assert to_lean(r"$\int_{-\infty}^a f$") == "∫ x in Set.Iic a, f"
    assert to_lean(r"$\int_{-\infty}^{a} f$") == "∫ x in Set.Iic a, f"
    assert to_lean(r"$\int_a^{\infty} f$") == "∫ x in Set.Ioi a, f"
    assert to_lean(r"$a^p \equiv a \pmod p$") == "a ^ p ≡ a [MOD p]"
    assert to_lean(r"$a \equiv b \pmod \ell$") == "a ≡ b [MOD ℓ]"
    for cmd in ("unlhd", "lhd", "trianglelefteq", "triangleleft"):
        assert to_lean(f"$N \\{cmd} G$") == "N Subgroup.Normal G", cmd
    assert to_lean(r"$\aleph_0$") == "ℵ₀"


# LaTeX notation for a notion → Mathlib's notation or name (`latexnotions`).
NOTIONS = {
    r"$\mathbb{Z}/n\mathbb{Z}$": "ZMod n",
    r"$\mathbb{Z}/(m)\mathbb{Z}$ is finite": "ZMod m is finite",
    r"$\mathbb{Q}_p$": "ℚ_[p]",
    r"$\mathbb{Z}_{p}$": "ℤ_[p]",
    r"$\mathbb{F}_{p^n}$": "GaloisField p n",
    r"$\mathbb{F}_p$": "ZMod p",
    r"$\mathbb{R}_x$": "ℝ x",  # no notion
    r"$GL_n(R)$": "Matrix.GeneralLinearGroup (Fin n) R",
    r"$SL_2(\mathbb{Z})$": "Matrix.SpecialLinearGroup (Fin 2) ℤ",
    r"$\mathrm{SL}(3, K)$": "Matrix.SpecialLinearGroup (Fin 3) K",
    r"$\mathbb{Z}[i]$": "GaussianInt",
    r"$\mathbb{Z}[\sqrt{d}]$": "ℤ√d",
    r"$R[x]$": "Polynomial R",
    r"$\mathbb{Q}[t]$": "Polynomial ℚ",
    r"$E[X]$": "E[X]",  # an expectation, not a ring
    r"$R[[x]]$": "PowerSeries R",
    r"$R[x_1, \ldots, x_n]$": "MvPolynomial (Fin n) R",
    r"$\bigoplus_i M_i$": "⨁ i, M i",
    r"$\mathrm{Hom}_R(M, N)$": "M →ₗ[R] N",
    r"$\operatorname{tr}(A)$": "trace (A)",
    r"$\mathrm{Var}(X)$": "variance (X)",
    r"$[G : H]$": "Subgroup.index H",
    r"$[L : K]$": "Module.finrank K L",
    r"$A^\circ$": "interior A",
    r"$L^p(\mu)$": "MeasureTheory.Lp p( μ )",
    r"$\ell^\infty$": "lp ∞",
    r"$\mathcal{O}_K$": "𝓞 K",
    r"$\mathfrak{sl}_n$ and $\mathfrak{p}$": "sl n and 𝔭",
    r"$\varphi(n)$": "Nat.totient n",
    r"$\mu(n)$": "ArithmeticFunction.moebius n",
    r"$\mu(X) < \infty$": "μ (X) < ∞",  # a measure
    r"$\Lambda(n)$": "ArithmeticFunction.vonMangoldt n",
    r"$\zeta(s)$": "riemannZeta s",
    r"$\Gamma(1/2)$": "Gamma (1/2)",
    r"$x - \lfloor x \rfloor$": "Int.fract x",
    r"$\frac{d}{dx} \sin x$": "deriv sin x",
    r"$\det(A^T) = \det A^\top$": "det (Aᵀ) = det Aᵀ",
    r"$x^t$": "x ^ t",  # a power
}
# Review of latex46: readings the notions must not take (the notation's other, usual meaning).
NOT_NOTIONS = {
    # big-O: only `\mathcal{O}_K`, a field's letter subscripted, is the ring of integers
    r"$f = \mathcal{O}(g)$": "f = O(g)",
    r"$\mathcal{O}_X$ structure sheaf": "O X structure sheaf",
    # `ℤ_[·]` (p-adic) only for a prime's letter; `\mathbb{Z}_n`, `\mathbb{Z}_6` are ℤ/nℤ
    r"$\mathbb{Z}_n$": "ZMod n",
    r"$\mathbb{Z}_6$ is cyclic": "ZMod 6 is cyclic",
    r"$\mathbb{Z}_\ell$": "ℤ_[ℓ]",
    r"$\mathbb{Q}_n$": "ℚ n",
    # `\mathbb{F}_q` has q elements, a prime power: not `ZMod q` (`\mathbb{F}_{p^n}` above)
    r"$\mathbb{F}_q$": "𝔽 q",
    r"$\mathbb{F}_2$": "ZMod 2",
    # a numeral is the field's size: a prime power is a Galois field, no other is a field
    r"$\mathbb{F}_4$": "GaloisField 2 2",
    r"$\mathbb{F}_{9}$": "GaloisField 3 2",
    r"$\mathbb{F}_6$": "𝔽 6",
    # `Hom(A, B)` without a ring names no linear map (groups', a category's)
    r"$\mathrm{Hom}(G, H)$ for groups": "Hom (G, H) for groups",
    r"$\operatorname{Hom}_{\mathcal{C}}(X, Y)$": "Hom 𝒞(X, Y)",
    r"$\mathrm{Hom}_k(V, W)$": "V →ₗ[k] W",
    # `M[i]` is an entry, not a polynomial ring; Mathlib's own `R[X]` is one
    r"$M[i]$ entry": "M[i] entry",
    r"$A[n]$": "A[n]",
    r"$K[X]$": "Polynomial K",
    # a lone `\pmod` leaves no open bracket
    r"$\pmod$": "",
}


def test_a_notation_with_another_usual_meaning_is_not_read_as_the_notion() -> None:
    r"""Review of latex46 (#1, #2, #3, #5, #9, #15): the rules fire only on the notation's
    reading as that notion — `\mathcal{O}` as big-O, `\mathbb{Z}_n` as ℤ/nℤ, `Hom(G, H)`,
    `M[i]`, `\mathbb{F}_q` are left alone or read as what they usually are."""
    wrong = {q: to_lean(q) for q, lean in NOT_NOTIONS.items() if to_lean(q) != lean}
    assert not wrong, wrong


def test_spaces_in_an_argument_are_read_once(monkeypatch) -> None:
    """Review of latex46 (#4): the notions' patterns read text whose whitespace `to_lean`
    collapsed first, and the GL/SL arguments' patterns are unambiguous (a long run of spaces
    in `GL(n, …` backtracked cubically: 64 s of CPU for 5,000; docs/benchmarks.md, latex46)."""
    from math2.retrieval import latex

    seen: list[str] = []
    real = latex.notions
    monkeypatch.setattr(latex, "notions", lambda t: seen.append(t) or real(t))
    latex._cached.cache_clear()
    assert to_lean(f"$GL(n,{' ' * 5000}R)$") == "Matrix.GeneralLinearGroup (Fin n) R"
    assert seen and not any("  " in t for t in seen), [t[:40] for t in seen]
    for open_ in ("GL(n,", "GL n (", "SL(n,", "SL n ("):
        assert "Matrix" not in to_lean(f"${open_}{' ' * 5000}$"), open_
    latex._cached.cache_clear()


def test_a_notions_notation_is_written_as_mathlib_writes_it() -> None:
    """Branch latex46, after reading the misses of `users-latex`: a notion's LaTeX notation
    reaches Mathlib's notation table (`ℚ_[`, `ℤ√`, `⨁`) or its name."""
    wrong = {q: to_lean(q) for q, lean in NOTIONS.items() if to_lean(q) != lean}
    assert not wrong, wrong


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


def test_no_command_of_the_dev_sets_becomes_a_word() -> None:
    """Every command a dev-set query writes (`benchmarks/devsets`), with each shape of argument
    and in its own query: none is left as a command, none leaves its name as a word (branch
    latex46: `\\mathbb` reached the namesakes' words, `\\pmod p` left `[MOD p` open)."""
    import yaml

    from math2.retrieval.devsets import devsets_dir

    queries = [str(item["q"]) for path in sorted(devsets_dir().glob("*.yaml"))
               for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []]  # fmt: skip
    names = {m for q in queries for m in re.findall(r"\\([A-Za-z]+)", q)}
    assert len(names) >= 70, sorted(names)  # the sets were read (73 commands at latex46)
    for name in sorted(names):
        for arg in ["", "{1}", "{x}{y}", "_{i=0}^{n}", "[2]{z}"]:
            _no_command_word(name, arg)
    for q in queries:
        lean = to_lean(q)
        assert not re.search(r"\\[A-Za-z]", lean), (q, lean)
        assert lean.count("[MOD") == len(re.findall(r"\[MOD [^][]+\]", lean)), (q, lean)


def test_a_notion_the_latex_names_is_a_namesake() -> None:
    """Branch latex46: the notions a query's LaTeX notation names (`notion_constants`) are
    its namesakes as a symbol's constant is; a name the user typed is not counted again, and
    a symbol Mathlib scopes (`ℵ₀`, `𝓞`) still names its notion."""
    from math2.retrieval.latex import notion_constants

    assert notion_constants(r"$SL_2(\mathbb{Z})$") == ["Matrix.SpecialLinearGroup"]
    assert notion_constants(r"$\mathbb{Z}/n\mathbb{Z}$ is finite") == ["ZMod"]
    assert notion_constants(r"$N \lhd G$") == ["Subgroup.Normal"]
    assert notion_constants(r"$\aleph_0$") == ["Cardinal.aleph0"]
    assert notion_constants(r"$\mathcal{O}_K$") == ["NumberField.RingOfIntegers"]
    assert notion_constants(r"$f = \mathcal{O}(g)$") == []  # big-O names nothing
    assert notion_constants(r"$\mathbb{Z}_6$ is cyclic") == ["ZMod"]
    assert notion_constants(r"$M[i]$") == [] and notion_constants(r"$\mathrm{Hom}(G, H)$") == []
    # a name typed is a whole identifier, not a substring (review #11: `\Gamma`, `MvPolynomial`)
    assert notion_constants(r"MvPolynomial and $R[x]$") == ["Polynomial"]
    assert notion_constants(r"$\Gamma(1/2)$") == ["Gamma"]
    assert notion_constants(r"ZMod.card and $\mathbb{Z}/n\mathbb{Z}$") == []
    assert notion_constants(r"$\frac{d}{dx} e^x$") == []  # `deriv` names no notion here
    assert notion_constants("ZMod n") == [] and notion_constants(r"$ZMod\ n$") == []


def test_what_a_docstrings_commands_read_is_pinned() -> None:
    """Review of latex46 (#6): the index text reads docstrings through `commands_out`; a change
    here changes what an index built before reads (text.py's TEXT_VERSION note), so the
    commands latex46 changed are pinned."""
    pinned = {"lhd": "Subgroup.Normal", "unlhd": "Subgroup.Normal", "normal": "Subgroup.Normal",
              "trianglelefteq": "Subgroup.Normal", "triangleleft": "Subgroup.Normal",
              "bigoplus": "⨁", "bigotimes": "⨂", "pmod": ""}  # fmt: skip
    read = {c: " ".join(commands_out(f"a \\{c} b").split()) for c in pinned}
    assert read == {c: " ".join(f"a {r} b".split()) for c, r in pinned.items()}
