"""The search index over mentions: lexical parts (BM25 over words, phrases and search aids) +
dense embeddings (`dense.py`) + informal descriptions + a PageRank prior over the dependency
graph.

The lexical score of a document d for a query q adds the BM25 scores of its parts:

    lex(d) = words(d) + w_phrase(q)·phrases(d) + w_syn·words_syn(d)
             + s(q)·(w_aids·aids(d) + w_parents·parents(d)) + (1 − s(q))·w_shape·shape(d)

(index text v3+; phrases and `w_phrase(q)` in `text.py`, aids and parents in `aids.py`;
`words_syn` is the words part scored for the Mathlib words the query's English stands for,
`english.py`, v4+). The
aids, which are prose, are matched with the query's English words only, and weighted by their
share s(q) of the query's tokens (`text.prose_tokens`): a Lean or LaTeX formula barely
touches them. The formula-shape part (`shape.py`, v7) is the converse: n-grams of the query's
formula with variables numbered, weighted by the formula's share 1 − s(q). The final ranking
fuses, for a document among the union of each part's top `pool` results,

    score(d) = Σ_part  w_part / (60 + rank_part(d))   ×   (1 + β · prior(d))

with w_bm25 = 1 (the lexical ranking), w_dense = 1 (the cosine rank among the lexical top 30:
the dense part reorders what BM25 found), w_desc = 1, and prior(d) the percentile
(0…1) of d's PageRank in the dependency graph, β = 0 by default (measured to hurt;
`prior_weight=` turns it on). A part that is absent (no embeddings built) contributes nothing.

Everything a query needs is memory-mapped (`lexical.py`) and loaded on first use, so a new
process answers a query in milliseconds after opening the index (`math2 search`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from math2.retrieval import lexical
from math2.retrieval.cards import Cards
from math2.retrieval.english import english_tokens, latex_tokens, mathlib_tokens
from math2.retrieval.levers import QueryLevers
from math2.retrieval.nameparts import FAMILIES
from math2.retrieval.ranker import RANKER_DIR, Ranker, RankerMissing
from math2.retrieval.shape import query_shape
from math2.retrieval.stage import RRF_K, W_BM25, W_DESC, FusionWeights, Rankings, fuse
from math2.retrieval.text import (
    FOLD_VERSION,
    prose_tokens,
    query_phrases,
    query_text,
    query_tokens,
    tokens,
    v1_tokens,
)

if TYPE_CHECKING:
    from math2.retrieval.build import build_index, doc_text, name_words, pagerank
    from math2.retrieval.dense import DenseIndex

log = logging.getLogger(__name__)

_ENCODER_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="math2-query-encoder")
# The dense part reorders the lexical top RERANK_TOP: its cosine rank among them is fused at
# weight W_DENSE. Measured on the dev sets over the full index (docs/benchmarks.md, issue 24.4):
# against the default path, nDCG@10 titles 0.551 -> 0.575, LaTeX 0.183 -> 0.223, Lean 0.419 ->
# 0.564, descriptions 0.394 -> 0.425, docstrings 0.196 -> 0.220. As a retriever of its own top
# 100 fused at 0.3 (before) it added +0.001 on the held-out benchmark and cost Lean-style
# queries: the encoder cannot find a formula among 279k declarations, but it can order 30.
W_DENSE = 1.0
RERANK_TOP = 30
# Search aids' weights in the lexical score, measured over the full index (docs/benchmarks.md,
# issue 24): titles and main results at 0.5 lift descriptions 0.356 -> 0.394 and docstrings
# 0.193 -> 0.196 over stems alone and leave Lean and LaTeX queries level; at 2 titles fall. The
# parents' docstrings lowered titles and descriptions at every weight tried: off (still built,
# so the lever can be measured again; `SearchIndex(..., parents_weight=w)`).
W_AIDS = 0.5
W_PARENTS = 0.0
BETA_PRIOR = 0.25
# The Mathlib words a query's English stands for (`english.py`: `divides` → `dvd`), scored
# apart at this weight (index text v4+). Measured on the dev sets over the full index
# (docs/benchmarks.md, issue 24, branch search2): at 1.5 natural-language descriptions 0.394 ->
# 0.450, slogans 0.237 -> 0.364, held-out docstrings 0.196 -> 0.207; titles, Lean, LaTeX level.
# The English words those Mathlib words translate then count W_TRANSLATED of their weight
# (`positive` pulled `Mathlib.Meta.Positivity.*` over `Nat.factorial_pos`): at 0.4
# descriptions 0.467, slogans 0.441, docstrings 0.210, titles level; at 0.2 titles fall.
# With the table as it is now: descriptions 0.468, slogans 0.446, docstrings 0.213.
# The Mathlib words of a query's LaTeX (`\\sum` → `sum`) are scored here too even though the
# words part already has them (branch latex): LaTeX 0.183 -> 0.230, the other styles level.
W_SYNONYMS = 1.5
W_TRANSLATED = 0.4
# The formula-shape part (`shape.py`, index text v7): its BM25 score is added at W_SHAPE times
# the query's formula share (1 − its prose share, `text.prose_tokens`), so a sentence is
# untouched. Measured on the dev sets over all of Mathlib (docs/benchmarks.md, issue 24, branch
# shape), against the default path without it: Lean 0.419 -> 0.736 nDCG@10, LaTeX 0.230 ->
# 0.478, special cases 0.189 -> 0.308, docstrings 0.213 -> 0.228; titles, descriptions,
# nicknames and slogans unchanged. At 0.25 level with 0.5; at 1.0 LaTeX and Lean fall.
W_SHAPE = 0.5
# Issue 33's query-side levers (index text v9, `levers.py`): the namesakes a query names are
# fused as a part of their own at W_NAMESAKE × their cover; the name words the query's phrases
# stand for in the library's prose (`vocabulary.py`) are scored like the English rows
# (W_VOCABULARY_MEASURED) when turned on. Off by default: measured alone over all of Mathlib it
# lowered titles 0.568 -> 0.438 nDCG@10, descriptions and the users-* natural and special sets
# (docs/benchmarks.md, issue 33); still built, so it can be measured again.
W_NAMESAKE = 1.0
W_VOCABULARY_MEASURED = W_SYNONYMS
W_VOCABULARY = 0.0
# What definitions say (`importers.lean_bodies`), as words: a part of its own, added to the
# lexical score at this weight (its shapes are in the shape part). Measured with every other
# lever on over all of Mathlib (docs/benchmarks.md, issue 33, branch search-levers): the
# users-* sets' held-out-mix mean 0.437 at 0, 0.441 at 0.25, 0.442 at 0.5; the old sets' 0.501,
# 0.495, 0.481 (titles 0.566, 0.557, 0.540); at 1.0 titles fell to 0.485, at 2.0 to 0.268.
# Chosen on those figures (every dev set's, no set's misses read): no set is left unread.
W_BODY = 0.25
# Issue 45 §1's name-part and gloss rankings (`nameparts.py`), fused like the other parts at
# these weights when turned on (`SearchIndex(parts_weight=…, glosses_weight=…)`). Off by
# default: over all of Mathlib on the dev sets (docs/benchmarks.md, issue 45, branch search)
# nDCG@10 fell from 0.422 (both off) to 0.249 (both on at 2 and 1); name parts off 0.348.
W_PARTS_MEASURED = 2.0
W_GLOSSES_MEASURED = 1.0
W_PARTS = 0.0
W_GLOSSES = 0.0
# Issue 45 §3: the learned ranker (`ranker.py`) orders the first stage's candidates where the
# index has one. Chosen against the fusion per target kind and query style under query-grouped
# cross-validation on the dev sets (docs/benchmarks.md, issue 45 §3).
USE_RANKER = True


class Hit(BaseModel):
    """One search result."""

    mention_id: int
    name: str
    score: float
    position: int = -1  # the document's position in its index
    bm25_rank: int | None = None
    dense_rank: int | None = None
    prior: float = 0.0
    renamed_from: str | None = None  # a deprecated name the query found, shown as its successor


PARTS = ("bm25", "dense", "desc", "prior", "aids", "parents", "nameparts", "glosses")


class SearchIndex:
    """A built index, opened lazily: `search(query, k)` and `search_batch(queries, k)`.

    Opening reads `meta.json` only; each part is memory-mapped the first time a query needs
    it. `aids_weight` and `parents_weight` set the aids' weights in the lexical score."""

    def __init__(
        self,
        folder: Path,
        aids_weight: float = W_AIDS,
        parents_weight: float = W_PARENTS,
        synonym_weight: float = W_SYNONYMS,
        translated_weight: float = W_TRANSLATED,
        shape_weight: float = W_SHAPE,
        namesake_weight: float = W_NAMESAKE,
        body_weight: float = W_BODY,
        vocabulary_weight: float = W_VOCABULARY,
        notation: bool = True,
        renames: bool = True,
        parts_weight: float = W_PARTS,
        glosses_weight: float = W_GLOSSES,
        families: frozenset[str] | None = None,
        use_ranker: bool = USE_RANKER,
    ):
        self.folder = folder
        self.meta = json.loads((folder / "meta.json").read_text())
        self.text_version = self.meta.get("text_version", 1)
        if not lexical.exists(folder / "bm25"):
            raise FileNotFoundError(
                f"{folder} was built by an older version of math2: rebuild it "
                f"(math2 index build --library {self.meta.get('source', '…')})"
            )
        self.stemmed = self.text_version >= 4
        self.folded = self.text_version >= FOLD_VERSION
        self.aids_weight = aids_weight
        self.parents_weight = parents_weight
        self.synonym_weight = synonym_weight
        self.translated_weight = translated_weight
        self.shape_weight = shape_weight
        self.namesake_weight = namesake_weight
        self.body_weight = body_weight
        self.vocabulary_weight = vocabulary_weight
        self.notation = notation
        self.renames = renames
        self.parts_weight, self.glosses_weight = parts_weight, glosses_weight
        self.families = FAMILIES if families is None else families
        self.use_ranker = use_ranker and (folder / RANKER_DIR).is_dir()
        if self.use_ranker:
            self.learned  # noqa: B018 (a ranker built for another index fails at open)
        self.levers = QueryLevers(folder)

    def __len__(self) -> int:
        return int(self.meta["count"])

    @cached_property
    def ids(self) -> np.ndarray:
        return lexical.mapped(self.folder / "ids.npy")

    @cached_property
    def names(self) -> list[str]:
        """Every name, loaded at once (`name(position)` reads one from the mapped file)."""
        names: list[str] = json.loads((self.folder / "names.json").read_text())
        return names

    @cached_property
    def cards(self) -> Cards:
        """What each declaration's hit shows (kind, module, docstring's first line)."""
        return Cards(self.folder)

    @cached_property
    def prior(self) -> np.ndarray:
        return lexical.mapped(self.folder / "prior.npy")

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

    @cached_property
    def desc(self) -> lexical.Lexical | None:
        return self._part("desc") if self.meta.get("descriptions") else None

    @cached_property
    def desc_pos(self) -> np.ndarray:
        positions: np.ndarray = np.load(self.folder / "desc" / "positions.npy")
        return positions

    @cached_property
    def dense(self) -> DenseIndex | None:
        from math2.retrieval.dense import DenseIndex

        return DenseIndex.load(self.folder, self.meta, len(self))

    @property
    def has_dense(self) -> bool:
        """Whether embeddings are present for every document (without loading them)."""
        info = self.meta.get("dense")
        return bool(info) and self.dense is not None

    def parts_built(self) -> list[str]:
        """The parts on disk that a search uses, in words (`BM25 + phrases + aids …`)."""
        found = ["BM25"]
        for label, folder, w in (
            ("phrases", "phrase", 1.0),
            ("aids", "aids", self.aids_weight),
            ("parents", "parents", self.parents_weight),
            ("shapes", "shape", self.shape_weight),
            ("bodies", "body", self.body_weight),
            ("namesakes", "names", self.namesake_weight),
            ("name parts", "parts", self.parts_weight),
            ("glosses", "glosses", self.glosses_weight),
        ):
            if w > 0 and lexical.exists(self.folder / folder):
                found.append(label)
        if self.notation and self.meta.get("notation"):
            found.append("notation")
        if self.vocabulary_weight > 0 and self.meta.get("vocabulary"):
            found.append("vocabulary")
        if self.meta.get("dense"):
            found.append("dense")
        if self.meta.get("descriptions"):
            found.append("descriptions")
        return found

    @cached_property
    def _name_lines(self) -> lexical.Lines | None:
        names = self.folder / "names"
        return lexical.Lines(names) if names.with_suffix(".txt").exists() else None

    @cached_property
    def _snippets(self) -> lexical.Lines:
        return lexical.Lines(self.folder / "snippets")

    def snippet(self, position: int) -> str:
        """The start of a document's statement (stored beside the index, mapped once)."""
        return self._snippets[position]

    def name(self, position: int) -> str:
        """One document's name, without loading them all (the names file is mapped once)."""
        if "names" in self.__dict__ or self._name_lines is None:
            return self.names[position]
        return self._name_lines[position]

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
        score: np.ndarray = sum(self.lexical_parts(query, use_aids).values())  # type: ignore[assignment]
        return score

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
        if use_aids and (self.aids is not None or self.parents is not None):
            words, share = prose_tokens(query, self.stemmed, self.folded)
            for name, part, w in (
                ("aids", self.aids, self.aids_weight),
                ("parents", self.parents, self.parents_weight),
            ):
                if part is not None and w > 0 and words:
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

    def rank_desc(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by BM25 over the informal descriptions."""
        if self.desc is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        toks = [query_tokens(q, self.stemmed, self.folded) for q in queries]
        return [np.asarray(self.desc_pos[self.desc.top(t, pool)]) for t in toks]

    def rank_dense(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by cosine similarity (ANN at size)."""
        if not self.meta.get("dense") or self.dense is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        return self.dense.rank(queries, pool)

    def _candidates(self, queries: list[str], lexical_: list[np.ndarray]) -> list[np.ndarray]:
        """What the dense part reorders: the lexical top RERANK_TOP, filled up by the dense
        part's own nearest documents where the words found fewer (a paraphrase)."""
        cands = [np.asarray(r[:RERANK_TOP], dtype=np.int64) for r in lexical_]
        short = [i for i, c in enumerate(cands) if len(c) < RERANK_TOP]
        if short and self.meta.get("dense") and self.dense is not None:
            near = self.rank_dense([queries[i] for i in short], RERANK_TOP)
            for i, extra in zip(short, near, strict=True):
                seen = set(cands[i].tolist())
                fill = [int(p) for p in extra if int(p) not in seen]
                cands[i] = np.concatenate([cands[i], np.asarray(fill, dtype=np.int64)])
                cands[i] = cands[i][:RERANK_TOP]
        return cands

    def rerank_dense(
        self, queries: list[str], candidates: list[np.ndarray], vectors: np.ndarray | None = None
    ) -> list[np.ndarray]:
        """Each query's candidates in cosine order (nothing where no dense part is built);
        `vectors`: the queries already encoded."""
        if not self.meta.get("dense") or self.dense is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        return self.dense.rerank(queries, candidates, vectors)

    def rankings(
        self,
        queries: list[str],
        pool: int = 100,
        parts: tuple[str, ...] = PARTS,
        terms: bool = False,
    ) -> list[Rankings]:
        """The first stage: each part's top `pool` for every query (`stage.Rankings`; the
        encoder runs batched). `terms`: keep the lexical score's terms (the ranker's
        features)."""
        use_aids = "aids" in parts or "parents" in parts
        n = len(queries)
        # The encoder reads the queries while the lexical parts are scored (onnxruntime lets
        # go of the GIL): a search with the dense part costs the longer of the two, not both.
        dense = self.dense if "dense" in parts and "bm25" in parts and self.has_dense else None
        encoding = None
        if dense is not None:
            encoding = _ENCODER_THREAD.submit(dense.encode_queries, queries)
        out = [Rankings() for _ in queries]
        if "bm25" in parts:
            for q, r in zip(queries, out, strict=True):
                if terms:
                    r.terms = self.lexical_parts(q, use_aids)
                    r.lexical_score = sum(r.terms.values())  # type: ignore[assignment]
                    assert r.lexical_score is not None
                    r.lexical = lexical.top_positions(r.lexical_score, pool)
                else:
                    r.lexical = lexical.top_positions(self.lexical_scores(q, use_aids), pool)
        if "dense" in parts and "bm25" in parts:
            lex = [r.lexical for r in out if r.lexical is not None]
            vectors = encoding.result() if encoding is not None else None
            for r, d in zip(out, self.rerank_dense(queries, self._candidates(queries, lex),
                                                   vectors), strict=True):  # fmt: skip
                r.dense = d
        elif "dense" in parts:
            for r, d in zip(out, self.rank_dense(queries, pool), strict=True):
                r.dense = d
        if "desc" in parts:
            for r, d in zip(out, self.rank_desc(queries, pool), strict=True):
                r.desc = d
        for q, r in zip(queries, out, strict=True):
            if self.namesake_weight > 0 and "bm25" in parts and self.text_version >= 9:
                r.namesakes = self.levers.namesakes(q, self.prior, self.notation)
            # the name parts and glosses are read where fused or where the ranker reads them
            if self.text_version >= 9 and "nameparts" in parts and (
                self.parts_weight > 0 or terms):  # fmt: skip
                r.nameparts_score = self.levers.score_parts(q, self.families)
                if r.nameparts_score is not None:
                    r.nameparts = lexical.top_positions(r.nameparts_score, pool)
            if self.text_version >= 9 and "glosses" in parts and (
                self.glosses_weight > 0 or terms):  # fmt: skip
                r.glosses_score = self.levers.score_glosses(q)
                if r.glosses_score is not None:
                    r.glosses = lexical.top_positions(r.glosses_score, pool)
        assert len(out) == n
        return out

    def fusion_weights(self, prior_weight: float, dense_weight: float) -> FusionWeights:
        return FusionWeights(
            dense=dense_weight,
            namesake=self.namesake_weight,
            nameparts=self.parts_weight,
            glosses=self.glosses_weight,
            prior=prior_weight,
        )

    @cached_property
    def learned(self) -> Ranker | None:
        """The learned ranker built with this index (`ranker.py`), None where none was
        built; one built for another index or math2 is an error (`RankerMismatch`)."""
        from math2.retrieval.ranker import Ranker

        return Ranker.load(self.folder, self.meta)

    def search_batch(
        self,
        queries: list[str],
        k: int = 10,
        pool: int = 100,
        parts: tuple[str, ...] = PARTS,
        prior_weight: float | None = None,
        dense_weight: float = W_DENSE,
        ranker: bool | None = None,
    ) -> list[list[Hit]]:
        """The top `k` of many queries: every part's top `pool` (the first stage,
        `rankings`), ordered by the learned ranker when `ranker` (default: `self.use_ranker`,
        where the index has one) and by the hand-tuned fusion (`stage.fuse`) otherwise."""
        if prior_weight is None:
            # Over the full index the prior at 0.25 lowers nDCG@10 on theorem titles with BM25
            # alone (0.46 -> 0.35) and with BM25 + dense (0.475 -> 0.393; docs/benchmarks.md,
            # Retrieval): it is off unless asked for (`prior_weight=BETA_PRIOR`).
            prior_weight = 0.0
        if ranker is None:
            ranker = self.use_ranker
        model = self.learned if ranker else None
        if ranker and model is None:
            raise RankerMissing(
                f"{self.folder} has no learned ranker: build it with "
                f"`math2 index build --library {self.meta.get('source', 'mathlib')}`"
            )
        weights = self.fusion_weights(prior_weight if "prior" in parts else 0.0, dense_weight)
        ranked = self.rankings(queries, pool, parts, terms=model is not None)
        results = []
        for query, r in zip(queries, ranked, strict=True):
            scores = fuse(r, weights, self.prior)
            if model is not None:
                scores = model.scores(self, query, r, scores)
            renamed = self._follow_renames(scores) if self.renames else {}
            top = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
            rb_pos = {int(p): i for i, p in enumerate(r.lexical)} if r.lexical is not None else {}
            rd_pos = {int(p): i for i, p in enumerate(r.dense)} if r.dense is not None else {}
            # built without validation: every value is already of its field's type, and
            # validating a hundred hits costs a query as much as a tenth of its scoring
            results.append(
                [
                    Hit.model_construct(
                        mention_id=int(self.ids[p]),
                        name=self.name(p),
                        score=s,
                        position=p,
                        bm25_rank=rb_pos.get(p),
                        dense_rank=rd_pos.get(p),
                        prior=float(self.prior[p]),
                        renamed_from=renamed.get(p),
                    )
                    for p, s in top
                ]
            )
        return results

    def _follow_renames(self, scores: dict[int, float]) -> dict[int, str]:
        """Each deprecated declaration among `scores` replaced by its successor (which keeps
        the better of the two scores); successor position → the old name shown beside it."""
        renamed: dict[int, str] = {}
        for p in [p for p in scores if self.levers.successor(p) is not None]:
            q = self.levers.successor(p)
            assert q is not None
            s = scores.pop(p)
            if s > scores.get(q, 0.0):
                scores[q] = s
                renamed[q] = self.name(p)
        return renamed

    def search(self, query: str, k: int = 10, **kw: Any) -> list[Hit]:
        """Fused results for one query."""
        return self.search_batch([query], k, **kw)[0]


# Building lives in `build.py`; these names stay importable from here, loaded on first use (the
# build reads the store, which a search never opens).
_BUILD = ("build_index", "doc_text", "name_words", "pagerank")


def __getattr__(name: str) -> object:
    if name in _BUILD:
        from math2.retrieval import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BETA_PRIOR", "PARTS", "RERANK_TOP", "RRF_K", "W_AIDS", "W_BM25", "W_DENSE", "W_DESC",
    "W_PARENTS", "Hit", "SearchIndex", "build_index", "doc_text", "name_words", "pagerank",
]  # fmt: skip
