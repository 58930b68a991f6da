"""A reader's words matched to the parts of Mathlib's names (issue 45 §1), two parts of an
index of their own, each fused as a ranking (`SearchIndex.search_batch`) when turned on (off by
default: measured to cost over all of Mathlib, `index.W_PARTS`):

- **name parts** (`parts/`): BM25 over each declaration's name words only (`deriv_mul` →
  `deriv`, `mul`; `MonoidHom.ker` → `monoid`, `hom`, `ker`), queried with only the Mathlib
  words the mapping families give for the query — a ranking of its own, not extra words in
  the words part (issue 45 measured the mined vocabulary as extra words at −0.06). "derivative
  of a product of two functions" asks for `deriv`, `mul`, `prod`, and `deriv_mul`, a short name
  of just those parts, outranks the lemmas whose docstrings say "product of two functions". A
  query no family maps (a Lean formula) leaves this part empty.
- **glosses** (`glosses/`): BM25 over the first line of the docstring of each *type*
  (`structure`, `class`, `inductive`; `TYPES`) and of each `def` at the root, other
  declarations empty, queried with the query's prose: Mathlib says what a concept is in its
  own first line (`MonoidHom`: "Bundled monoid homomorphisms; use this for bundled group
  homomorphisms too"), so "group homomorphism" finds the concept and not only the lemmas about it.

The mapping families (`FAMILIES`, each can be left out to measure it, `SearchIndex(...,
families=…)`): `english` (the hand rows of `english.py`: `derivative` → `deriv`, `product` →
`mul prod`, `homomorphism` → `hom`), `vocabulary` (the phrase → name-word table mined from the
library's docstrings, `vocabulary.py`, its two best words per phrase), `convention`
(Mathlib's naming convention: `0` `1` `2` → `zero` `one` `two` beside other mapped words; a
big operator whose body is its own variable, `∑ i ∈ s, i` in the query's Lean or translated
LaTeX, → `id`), `latex` (`english.latex_tokens`: `\\sum` → `sum`, `\\binom` → `choose`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from math2.lean.syntax import split_identifier
from math2.retrieval.english import latex_tokens, mathlib_groups, mathlib_tokens
from math2.retrieval.text import STOPWORDS, tokens

TYPES = frozenset({"structure", "class", "inductive", "class inductive", "coinductive"})
FAMILIES = frozenset({"english", "vocabulary", "convention", "latex"})
# `∑ i ∈ s, i`: a big operator whose body is its own variable is Mathlib's `…_id`.
_ID_BODY = re.compile(r"[∑∏]\s*(\w+)\s*∈[^,]*,\s*\(?\s*\1\b(?!\s*[\^_(\w'])")
_TYPES = frozenset({"nat", "int", "rat", "real", "complex"})
_NUMBERS = {"0": "zero", "1": "one", "2": "two"}
_NUMBER = re.compile(r"(?<![\w.])([012])(?![\w.])")
# Words of one rule that are names of one thing in Mathlib, either of which says it (`products?`
# → `prod mul`: a big operator or a pair's product, and a binary one; the pairs of
# `english.OPERATIONS`: a sum); the other rules' words
# are compounds, all of which a name says (`bounded above` → `bdd above`).
ONE_THING = (frozenset({"prod", "mul"}), frozenset({"sum", "add"}))
# Name words too common to say which declaration is meant (`Foo.bar_of_baz`, `_iff`).
_WEAK = frozenset({"of", "iff", "eq", "apply", "def", "mk", "coe", "to", "is", "has"})


@lru_cache(maxsize=1 << 17)
def document_parts(name: str, stemmed: bool = True, folded: bool = True) -> tuple[str, ...]:
    """The words of a name, each once (`Finset.sum_range_id_mul_two` → `finset sum range id mul
    two`). Once: a name that repeats a word is not more about it, and counted as often as it
    is written `ExpGrowth.expGrowthInf_exp` outranked every other name with `exp` (issue 45
    §3: that is what sank the name-part ranking over all of Mathlib, docs/benchmarks.md).
    Cached: the ranker's features read the names of a query's few hundred candidates, and the
    same names come back query after query."""
    words = split_identifier(name.replace("«", "").replace("»", ""))
    if any(c in w for w in words for c in "|∣{"):  # a bar is read by its context (`bar_words`)
        return tuple(dict.fromkeys(tokens(" ".join(words), stemmed, folded)))
    # else word by word, each word's tokens kept: `tokens` reads a word alone as it reads it
    # among others (the same tokens, in another order), and the words recur across names
    return tuple(dict.fromkeys(t for w in words for t in _word_tokens(w, stemmed, folded)))


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str, stemmed: bool, folded: bool) -> tuple[str, ...]:
    return tuple(tokens(word, stemmed, folded))


def query_weights(
    query: str,
    vocabulary: Callable[[str], dict[str, float]] | None = None,
    families: frozenset[str] = FAMILIES,
) -> dict[str, float]:
    """The name words a query asks for, each with how reliably the query says it: the words
    the mapping families give for what it says (see the module), a hand-written row (english,
    latex, convention) at 1, a mined one at its reliability (`Vocabulary.weighted`), the best
    family's where two give one word. Only these: the query's own words are the words part's,
    and a formula's operators (`add`, `eq`) would match every name that spells them."""
    from math2.retrieval.latex import has_latex, to_lean

    text = to_lean(query) if "latex" in families and has_latex(query) else query
    mapped: dict[str, float] = {}

    def add(words: list[str] | dict[str, float]) -> None:
        for w in words:
            weight = words[w] if isinstance(words, dict) else 1.0
            mapped[w] = max(mapped.get(w, 0.0), weight)

    if "english" in families:
        add(mathlib_tokens(query))
    if "vocabulary" in families and vocabulary is not None:
        add(vocabulary(query))
    if "latex" in families and text is not query:  # operators, not the types (`\\mathbb{N}`)
        add([w for w in latex_tokens(query) if w not in _TYPES])
    if "convention" in families:
        add([_NUMBERS[d] for d in _NUMBER.findall(text)] if mapped else [])
        add(["id"] if _ID_BODY.search(text) else [])
    return {w: v for w, v in mapped.items() if w not in _WEAK and w not in STOPWORDS}


def query_groups(
    query: str,
    vocabulary: Callable[[str], dict[str, float]] | None = None,
    families: frozenset[str] = FAMILIES,
) -> list[list[str]]:
    """The things a query asks for, each as the name words that may name it (a rule's or a
    mined phrase's words, `mathlib_groups`), only the words `query_weights` keeps: `product`
    → [`prod`, `mul`], so that `deriv_mul` says all of "derivative of a product" though it
    has one of the two."""
    wanted = query_weights(query, vocabulary, families)
    groups: list[list[str]] = []
    if "english" in families or "latex" in families:
        groups += mathlib_groups(query)
    grouped = {w for g in groups for w in g}
    groups += [[w] for w in wanted if w not in grouped]
    kept = [[w for w in dict.fromkeys(g) if w in wanted] for g in groups]
    return [list(g) for g in dict.fromkeys(tuple(g) for g in kept if g)]


def query_terms(
    query: str,
    vocabulary: Callable[[str], dict[str, float]] | None = None,
    families: frozenset[str] = FAMILIES,
) -> list[list[str]]:
    """The name-part ranking's query terms: each a word the query asks for
    (`query_weights`), but the words of one rule that are one thing's names in Mathlib
    (`ONE_THING`: a product is `prod` or `mul`) one term that either word says, counted once
    with the IDF of the names that have either (`lexical.Lexical.one_of_scores`). Counted as
    two words, `prod` (rarer than `mul`) outranked every `…mul` name and a name with both
    outranked either: `Polynomial.derivative_prod` above `deriv_mul` for "derivative of a
    product of two functions" (issue 45). A word that another thing the query says asks for
    alone stays a term of its own beside the joined one ("the product of two multiplicative
    functions": `mul` for "multiplicative" as well as `prod | mul` for "product"; absorbed,
    the second `mul` was lost: issue 45's review note L4, docs/benchmarks.md, qual45c)."""
    wanted = list(query_weights(query, vocabulary, families))
    groups = query_groups(query, vocabulary, families)
    joined: list[list[str]] = []
    for g in groups:
        alike = [w for w in g if any(w in one and len(set(g) & one) > 1 for one in ONE_THING)]
        if len(alike) > 1:
            joined.append(alike)
    taken = {w for g in joined for w in g}
    alone = {g[0] for g in groups if len(g) == 1}
    return joined + [[w] for w in wanted if w not in taken or w in alone]


def query_parts(
    query: str,
    vocabulary: Callable[[str], dict[str, float]] | None = None,
    families: frozenset[str] = FAMILIES,
) -> list[str]:
    """The name words a query asks for (`query_weights`' words)."""
    return list(query_weights(query, vocabulary, families))


def glossed(name: str, kind: str | None) -> bool:
    """Whether a declaration's first line is a gloss: a type's, or a root definition's."""
    return kind in TYPES or (kind in ("def", "abbrev") and "." not in name)


def gloss(docstring: str | None) -> str:
    """A concept's own first line: its docstring up to the first blank line or full stop."""
    if not docstring:
        return ""
    first = docstring.strip().split("\n\n", 1)[0]
    return " ".join(re.split(r"(?<=\.)\s", first, maxsplit=1)[0].split())
