"""The lexical score of a query over every document of an index (`LexicalScoring`, a part of
`SearchIndex`): its BM25 parts opened on first use, the query's tokens, each weighted term
(`lexical_parts`, the learned ranker's features) and their sum (`lexical_scores`). The formula
and the weights: `index.py`'s module docstring and `weights.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from math2.retrieval import lexical
from math2.retrieval.english import english_tokens, latex_tokens, mathlib_tokens
from math2.retrieval.levers import QueryLevers
from math2.retrieval.shape import query_shape
from math2.retrieval.text import (
    prose_tokens,
    query_phrases,
    query_text,
    query_tokens,
    tokens,
    v1_tokens,
)


class LexicalScoring:
    """The lexical parts of the index at `folder` and what a query scores on them."""

    folder: Path
    text_version: int
    stemmed: bool
    folded: bool
    notation: bool
    levers: QueryLevers
    aids_weight: float
    parents_weight: float
    synonym_weight: float
    translated_weight: float
    shape_weight: float
    body_weight: float
    vocabulary_weight: float

    def _part(self, name: str) -> lexical.Lexical | None:
        folder = self.folder / name
        return lexical.Lexical(folder) if lexical.exists(folder) else None

    @cached_property
    def bm25(self) -> lexical.Lexical:
        return lexical.Lexical(self.folder / "bm25")

    @cached_property
    def phrase(self) -> lexical.Lexical | None:
        return self._part("phrase") if self.text_version >= 3 else None

    @cached_property
    def aids(self) -> lexical.Lexical | None:
        return self._part("aids")

    @cached_property
    def shape(self) -> lexical.Lexical | None:
        return self._part("shape")

    @cached_property
    def body(self) -> lexical.Lexical | None:
        return self._part("body")

    @cached_property
    def parents(self) -> lexical.Lexical | None:
        return self._part("parents")

    def _query_tokens(self, query: str) -> list[str]:
        if self.text_version == 1:
            return v1_tokens([query])[0]
        toks = query_tokens(query, self.stemmed, self.folded)
        if self.notation:
            more = self.levers.notation_tokens(
                query_text(query), lambda t: tokens(t, self.stemmed, self.folded)
            )
            toks += [t for t in dict.fromkeys(more) if t not in toks]
        return toks

    def lexical_scores(self, query: str, use_aids: bool = True) -> np.ndarray:
        """The lexical score of every document (see the module docstring)."""
        return lexical.total(self.lexical_parts(query, use_aids).values())

    def lexical_parts(self, query: str, use_aids: bool = True) -> dict[str, np.ndarray]:
        """The weighted terms of the lexical score, by part (`LEXICAL_TERMS`; absent terms
        are left out): their sum is `lexical_scores`, each a feature of the learned ranker."""
        toks = self._query_tokens(query)
        out: dict[str, np.ndarray] = {"words": self.bm25.scores(toks)}
        if self.stemmed and self.synonym_weight > 0:
            mathlib = mathlib_tokens(query)
            latex = set(latex_tokens(query))
            extra = [t for t in mathlib if t not in toks or t in latex]
            syn = self.synonym_weight * self.bm25.scores(extra) if extra else None
            # The English words of a translated phrase count W_TRANSLATED instead of 1.
            eng = [t for t in english_tokens(query) if t in toks and t not in mathlib]
            if eng and self.translated_weight != 1.0:
                less = (1.0 - self.translated_weight) * self.bm25.scores(eng)
                syn = -less if syn is None else syn - less
            if syn is not None:
                out["synonyms"] = syn
        if self.stemmed and self.vocabulary_weight > 0:
            said = set(toks) | set(mathlib_tokens(query) if self.synonym_weight > 0 else ())
            vocab = [w for w in self.levers.vocabulary_words(query) if w not in said]
            if vocab:
                out["vocabulary"] = self.vocabulary_weight * self.bm25.scores(vocab)
        if self.body_weight > 0 and self.body is not None:
            out["body"] = self.body_weight * self.body.scores(toks)
        if self.phrase is not None:
            ptoks, weight = query_phrases(query, self.stemmed, self.folded)
            if weight > 0:
                out["phrases"] = weight * self.phrase.scores(ptoks)
        if self.shape_weight > 0 and self.shape is not None:
            grams, formula = query_shape(query, folded=self.folded)
            if grams and formula > 0:
                out["shape"] = self.shape_weight * formula * self.shape.scores(grams)
        # a part weighted 0 is not opened (the parents' is, by default: W_PARENTS)
        prose = [(n, w) for n, w in (("aids", self.aids_weight), ("parents", self.parents_weight))
                 if use_aids and w > 0]  # fmt: skip
        if prose:
            words, share = prose_tokens(query, self.stemmed, self.folded)
            for name, w in prose:
                part = self.aids if name == "aids" else self.parents
                if part is not None and words:
                    out[name] = w * share * part.scores(words)
        return out

    def coverage(self, query: str, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The share (0…1) of the query's tokens each document's words contain: comparable
        across libraries, where fused scores (ranks) and BM25 scores (corpus statistics) are
        not."""
        toks = list(dict.fromkeys(self._query_tokens(query)))
        if not toks:
            return np.zeros(len(positions))
        return self.bm25.matched(toks, np.asarray(positions)) / len(toks)

    def rank_bm25(self, queries: list[str], pool: int, use_aids: bool = True) -> list[np.ndarray]:
        """Top `pool` document positions per query by the lexical score."""
        return [lexical.top_positions(self.lexical_scores(q, use_aids), pool) for q in queries]
