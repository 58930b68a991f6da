"""What is indexed for a declaration and how a query is read (index text version 2).

Queries: LaTeX is rewritten into the Unicode and names Mathlib uses (`\\sqcup` → `⊔`,
`\\mathbb{R}` → `ℝ`, `\\le` → `≤`, `\\sum` → `∑`), each notation symbol also contributes the
words of the constant behind it (`ℝ` → `real`, `∑` → `sum`), and Lean identifiers and camel
case are split (`Nat.Prime.two_le` → `nat prime two le`) with the whole identifier kept too.

Documents: the name and its words, the statement with its notation, the docstring, the words
of the module path, and the words of the constants the statement uses.

Tokens: lower-case words (letters, digits, `'`), single notation symbols kept as tokens (BM25 on
bm25s's default tokenizer drops `ℝ`, `≤` and every one-letter word), English stop words out.

Phrases (index text version 3 = version 2 + a phrase part): each pair of adjacent words of the
name and of the docstring (stop words out, so "theorem of algebra" gives `theorem_algebra`) is
a token of a second BM25 index. A query's phrase score is added to its word score with weight
`PHRASE_WEIGHT × min(1, PHRASE_QUERY_WORDS / query words)`: a short title ("fundamental
theorem of algebra") is mostly its phrase, while in a long description adjacent words are
rarely a name, and siblings sharing a docstring's wording would crowd the answer out. Measured
in docs/benchmarks.md (Retrieval).

Morphology (index text version 4 = version 3 with stems): every word, and every word of a split
identifier, is reduced to its Snowball (Porter 2) English stem in documents, phrases and queries
alike (`primes` → `prime`, `continuity` and `continuous` → `continu`, `normed` → `norm`); whole
identifiers (`nat.prime.two_le`) and notation symbols are kept as written. Keeping each word
beside its stem instead (a word in its written form matching twice) measured worse on titles
and LaTeX queries (docs/benchmarks.md, issue 24).

Index text version 5 = version 4 with the constants of a statement read by the one Lean lexer
(`math2.lean.syntax.constants_of`: nothing inside strings or comments, «names», every name
character Lean allows) and identifiers split by `math2.lean.syntax.split_identifier`. Queries
are read as in version 4; `math2 build` rebuilds an index of an older version.

Index text version 6 = version 5 with accents folded in documents, phrases, search aids and
queries alike (`fold_accents`: `Bézout` → `Bezout`, `Hölder` → `Holder`, `Łoś` → `Los`), Latin
letters only — Greek letters, `ℝ`, `𝕜`, subscripts, superscripts and notation stay as written
(Unicode NFKD would turn `ℝ` into `R` and `ᵢ` into `i`). A word with `ä`/`ö`/`ü` also gives its
German transliteration as a second form (`Schröder` → `schroder` and `schroeder`, as Mathlib
spells `schroeder_bernstein`).

Index text version 7 = version 6 + the formula-shape part (`shape/`, `math2.retrieval.shape`):
BM25 over the n-grams of each statement's shape (variables numbered, constants and notation
kept); the documents of the other parts are those of version 6.

Index text version 8 = version 7 with each alias given its target's statement (and docstring
where it has none): `alias mul_pos := Left.mul_pos` has no statement of its own in the source
scan (`math2.retrieval.aliases`).

Index text version 9 = version 8 with what a definition says (a def's value, a structure's
fields, an inductive's constructors, recorded by the source scan: `importers.lean_bodies`) as
words and formula shapes, a name's `«»` quotes dropped beside it as written, notation read
from the library (`notation.py`), and the name-key, vocabulary and rename parts (`names.py`,
`vocabulary.py`). Each of these document-side levers can be left out of a build (`LEVERS`),
so each can be measured alone.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any

from math2.lean.syntax import constants_of, split_identifier

# 9 kept by latex46: `latex.MACROS`/`_BIG` changed what 8 commands read in docstrings (`\lhd`
# kin → `Subgroup.Normal`, `\bigoplus` → `⨁`, `\bigotimes` → `⨂`, `\pmod` → nothing, was `[MOD`);
# of Mathlib's declaration docstrings at the pin one writes them (`groupHomology.
# inhomogeneousChains`, `\bigoplus`; the rest are module docs), so an index built before reads
# as this code would but for that one docstring: no rebuild is forced for it.
TEXT_VERSION = 9
FOLD_VERSION = 6  # the first index text version with accents folded
SHAPE_VERSION = 7  # the first version with the formula-shape part
ALIAS_VERSION = 8  # the first with aliases given their targets' statements
LEVER_VERSION = 9  # the first with issue 33's levers (definition bodies, notation, names, …)
# The document-side levers of version 9, each of which a build can leave out.
LEVERS = frozenset({"body", "notation", "names", "vocabulary"})
PHRASE_WEIGHT = 0.5
PHRASE_QUERY_WORDS = 4

# Notation → the words of what it denotes in Mathlib.
_SYMBOL_WORDS = {
    "ℕ": "nat", "ℤ": "int", "ℚ": "rat", "ℝ": "real", "ℂ": "complex", "∑": "sum", "∏": "prod",
    "∫": "integral", "≤": "le", "<": "lt", "≥": "ge", ">": "gt", "≠": "ne", "⊔": "sup",
    "⊓": "inf", "∪": "union", "∩": "inter", "⊆": "subset", "⊂": "ssubset", "∈": "mem",
    "∉": "not mem", "¬": "not", "∧": "and", "∨": "or", "→": "imp", "↔": "iff", "∘": "comp",
    "×": "prod", "•": "smul", "⊗": "tensor", "⊕": "sum", "∅": "empty", "⊤": "top", "⊥": "bot",
    "∣": "dvd", "√": "sqrt", "π": "pi", "≡": "modeq", "≃": "equiv", "⌊": "floor", "⌈": "ceil",
    "∞": "top", "∂": "deriv", "⋃": "iUnion", "⋂": "iInter", "=": "eq", "+": "add", "*": "mul",
    "^": "pow", "/": "div", "-": "sub", "!": "factorial", "%": "mod", "|": "abs",
}  # fmt: skip
_SYMBOLS = set(_SYMBOL_WORDS) | {"ℝ≥0", "∀", "∃", "↦", "∇", "△", "∠", "⟂", "≈", "⁻¹"}
SYMBOLS = frozenset(_SYMBOLS)  # the notation this table reads (`notation.py` leaves it alone)
_IDENT = re.compile(r"[^\W\d][\w'!?₀-₉]*(?:\.[^\W\d][\w'!?₀-₉]*)*")
_STOP = "a an are as at be but by for in into is it no of on such that the their then there"
_STOP += " these they this to was will with we let which where when from its"
# `not`, `and`, `or`, `if` name Mathlib constants (`not_not`, `and_comm`, `if_pos`): kept.
STOPWORDS = frozenset(_STOP.split())


# Latin letters that NFKD does not decompose, and their usual ASCII spelling.
_LATIN_EXTRA = {
    "ß": "ss", "ẞ": "SS", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "æ": "ae", "Æ": "AE",
    "œ": "oe", "Œ": "OE", "đ": "d", "Đ": "D", "ı": "i", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D",
}  # fmt: skip
_UMLAUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})
_UMLAUT_WORD = re.compile(r"\w*[äöüÄÖÜ]\w*")


class _FoldTable(dict[int, str]):
    """`str.translate` table, filled per character on first sight: a Latin letter (category
    Lu/Ll, Unicode name `LATIN …`) whose NFKD form without combining marks is ASCII letters
    maps to them; every other character (Greek, `ℝ`, `𝕜`, `ᵢ`, `²`, `≤`, …) to itself."""

    def __missing__(self, code: int) -> str:
        c = chr(code)
        out = _LATIN_EXTRA.get(c, c)
        latin = unicodedata.name(c, "").startswith("LATIN ")
        if out == c and latin and unicodedata.category(c) in ("Lu", "Ll"):
            nfkd = unicodedata.normalize("NFKD", c)
            base = "".join(ch for ch in nfkd if not unicodedata.combining(ch))
            out = base if base.isascii() and base.isalpha() else c
        if code < 0x2000:  # Latin blocks only: an untrusted query cannot grow the table
            self[code] = out
        return out


_FOLD = _FoldTable()


def fold_accents(text: str) -> str:
    """`Bézout's lemma` → `Bezout's lemma`; only Latin letters change (see the docstring)."""
    return text if text.isascii() else text.translate(_FOLD)


def german_forms(text: str) -> list[str]:
    """The German transliteration of each word with `ä`/`ö`/`ü`: `Schröder` → `Schroeder`."""
    if text.isascii():
        return []
    return [fold_accents(w.translate(_UMLAUT)) for w in _UMLAUT_WORD.findall(text)]


def fold(text: str) -> str:
    """What version 6 reads of a text: accents folded, the German second forms appended."""
    if text.isascii():
        return text
    return " ".join([fold_accents(text), *german_forms(text)])


def latex_to_unicode(text: str) -> str:
    """`$\\sum_{i \\le n} x_i \\in \\mathbb{R}$` → `∑ i ≤ n, x i ∈ ℝ`: the text's LaTeX parsed
    and written as Lean (`math2.retrieval.latex.to_lean`; no command is left as a word)."""
    from math2.retrieval.latex import to_lean

    return to_lean(text)


@functools.cache
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: the Snowball stemmers

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (`primes` → `prime`); kept for the words
    met again (an index reads 280,000 declarations with a small vocabulary)."""
    return str(_stemmer().stemWord(word))


@functools.lru_cache(maxsize=1 << 17)
def _split(ident: str) -> tuple[str, ...]:
    """`split_identifier`, kept for the identifiers met again (`Finset.sum`, `Real`)."""
    return tuple(split_identifier(ident))


def tokens(text: str, stemmed: bool = False, folded: bool = False) -> list[str]:
    """Index and query tokens: words, split identifiers (whole ones kept), notation symbols and
    the words they stand for; with `stemmed`, words reduced to their stems (version 4); with
    `folded`, accents folded and German second forms added (version 6)."""
    if folded:
        text = fold(text)
    out: list[str] = []
    for m in _IDENT.finditer(text):
        ident = m.group(0)
        parts = _split(ident)
        if len(parts) > 1:
            out.append(ident.lower())
        out += [stem(w) for w in parts if w not in STOPWORDS] if stemmed else list(parts)
    bars = bar_words(text) if "|" in text or "∣" in text else []
    for ch in text:
        if ch in _SYMBOLS:
            out.append(ch)
            words = bars.pop(0).split() if ch in "|∣" else _SYMBOL_WORDS.get(ch, "").split()
            out += [stem(w) for w in words] if stemmed else words
    out += [d for d in re.findall(r"\d+", text)]
    return [t for t in out if t not in STOPWORDS]


# `{ x | p x }`, `{ x ∈ s | p x }`, `{(a, b) | …}`: a bar right after a set-builder's binder.
_SET_BUILDER = re.compile(r"\{\s*(?:[^{}|∣]{1,40}?)\s*[|∣](?![|∣])")
_PIPE = re.compile(r"\|>\.?|<\||\|\|")  # Lean's pipelines and `||`: not bars


def bar_words(text: str) -> list[str]:
    """What each `|` and `∣` of the text means, in order (issue 45 §5: `|` was always read as
    absolute value): after a set-builder's binder it is `setOf` (`set`); `∣` elsewhere is
    divisibility (`dvd`); a `|` elsewhere is `abs` when the text has another to pair it with
    (`|x - y|`), else `dvd` (`a | b`, how prose writes divisibility)."""
    skipped = {m.start() + k for m in _PIPE.finditer(text) for k in range(len(m.group()))}
    builders = {m.end() - 1 for m in _SET_BUILDER.finditer(text)}
    bars = [i for i, c in enumerate(text) if c in "|∣"]
    plain = [i for i in bars if text[i] == "|" and i not in builders and i not in skipped]
    out = []
    for i in bars:
        if i in builders:
            out.append("set")
        elif text[i] == "∣" or i in skipped:
            out.append("dvd" if text[i] == "∣" else "")
        else:
            out.append("abs" if len(plain) >= 2 else "dvd")
    return out


def query_text(query: str) -> str:
    """The query as indexed text sees it: LaTeX rewritten, the original kept beside it."""
    if "«" in query:  # `Quiver.Path.«end»` as indexed without its quotes too
        query = f"{query} {query.replace('«', '').replace('»', '')}"
    norm = latex_to_unicode(query)
    return norm  # LaTeX read as Lean only: its commands (`\\left`, `\\mathrm`) are no words


def query_tokens(query: str, stemmed: bool = False, folded: bool = False) -> list[str]:
    """Tokens of a query, from both its LaTeX and its Unicode form (duplicates dropped)."""
    return list(_query_tokens(query, stemmed, folded))


@functools.lru_cache(maxsize=1024)
def _query_tokens(query: str, stemmed: bool, folded: bool) -> tuple[str, ...]:
    """Kept: a search reads one query's tokens a dozen times (each part, each feature)."""
    return tuple(dict.fromkeys(tokens(query_text(query), stemmed, folded)))


_PROSE = re.compile(r"(?<![\\\w.])[A-Za-z][a-z]{2,}(?:[-'][a-z]+)*(?![\w.(])")


def prose_tokens(query: str, stemmed: bool = True, folded: bool = False) -> tuple[list[str], float]:
    """The English words of a query (three letters or more, not part of an identifier, a
    LaTeX command or a call) and their share of its tokens: what is matched against search
    aids, which are prose. `Real.exp (x + y) = …` has almost none; a description is all.
    With `folded` (version 6) accented words are read folded (`Bézout` → `bezout`); without
    it they are not read at all."""
    words = [w.lower() for w in _PROSE.findall(fold(query) if folded else query)]
    words = [w for w in words if w not in STOPWORDS]
    if stemmed:
        words = [stem(w) for w in words]
    words = list(dict.fromkeys(words))
    share = len(words) / max(1, len(query_tokens(query, stemmed, folded)))
    return words, min(1.0, share)


def module_words(module: str | None) -> str:
    """`Mathlib.Algebra.Group.Basic` → `Algebra Group Basic`."""
    if not module:
        return ""
    return " ".join(module.split(".")[1:])


def constant_words(text: str | None) -> str:
    """The words of the constants a Lean text names (`Nat.Prime p` → `nat prime`)."""
    return " ".join(" ".join(split_identifier(c)) for c in constants_of(text))


def document_text(
    name: str,
    statement: str | None,
    docstring: str | None,
    module: str | None = None,
) -> str:
    """Index text version 2 of one declaration; from version 9 also its name without `«»`
    quotes (`Quiver.Path.end`)."""
    from math2.retrieval.latex import commands_out

    consts = constant_words(statement)
    plain = name.replace("«", "").replace("»", "") if "«" in name else ""
    doc = commands_out(docstring) if docstring else ""  # no LaTeX command is a word
    parts = (name, plain, statement or "", doc, module_words(module), consts)
    return " ".join(x for x in parts if x)


def dense_text(name: str, statement: str | None, docstring: str | None) -> str:
    """What the encoder reads of one declaration: its name as words, then its docstring, then
    its statement. The encoder keeps only the first 64 tokens, so the natural-language part
    comes before the notation (over the full index this order lifted the encoder's nDCG@10 on
    theorem titles from 0.37 to 0.55 against index text v3's order; docs/benchmarks.md)."""
    words = " ".join(split_identifier(name))
    return " ".join(x for x in (f"{words}.", docstring or "", statement or "") if x)


_WORD = re.compile(r"[a-z0-9']+")


def phrases(text: str, stemmed: bool = False, folded: bool = False) -> list[str]:
    """Adjacent word pairs, stop words out: `Fundamental theorem of algebra` →
    `[fundamental_theorem, theorem_algebra]` (stems with `stemmed`). With `folded`, accents
    are folded and a text with `ä`/`ö`/`ü` also gives the pairs of its German spelling
    (`Schröder–Bernstein` → `schroder_bernstein`, `schroeder_bernstein`)."""
    if folded and not text.isascii():
        pairs = _pairs(fold_accents(text), stemmed)
        if german_forms(text):
            seen = set(pairs)
            pairs += [p for p in _pairs(fold_accents(text.translate(_UMLAUT)), stemmed)
                      if p not in seen]  # fmt: skip
        return pairs
    return _pairs(text, stemmed)


def _pairs(text: str, stemmed: bool) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    if stemmed:
        words = [stem(w) for w in words]
    return [f"{a}_{b}" for a, b in itertools.pairwise(words)]


def document_phrases(
    name: str, docstring: str | None, stemmed: bool = False, folded: bool = False
) -> list[str]:
    """The phrase tokens of one declaration: from its name's words and its docstring."""
    from math2.retrieval.latex import commands_out

    return phrases(" ".join(split_identifier(name)), stemmed, folded) + phrases(
        commands_out(docstring) if docstring else "", stemmed, folded
    )


def query_phrases(
    query: str, stemmed: bool = False, folded: bool = False
) -> tuple[list[str], float]:
    """A query's phrase tokens and the weight of its phrase score (see the module's docstring)."""
    n = max(1, len(query_tokens(query)))
    return list(dict.fromkeys(phrases(query_text(query), stemmed, folded))), PHRASE_WEIGHT * min(
        1.0, PHRASE_QUERY_WORDS / n
    )


def v1_tokens(texts: list[str]) -> list[list[str]]:
    """The first index's tokens (index text version 1): bm25s's default tokenizer with English
    stop words."""
    import bm25s

    out: list[list[str]] = bm25s.tokenize(
        texts, stopwords="en", show_progress=False, return_ids=False
    )
    return out
