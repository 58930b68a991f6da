"""The search index over mentions: lexical parts (BM25 over words, phrases and search aids) +
dense embeddings (`dense.py`) + informal texts (`informal.py`) + a PageRank prior over the
dependency graph.

The lexical score of a document d for a query q adds the BM25 scores of its parts:

    lex(d) = words(d) + w_phrase(q)·phrases(d) + w_syn·words_syn(d)
             + s(q)·(w_aids·aids(d) + w_parents·parents(d)) + (1 − s(q))·w_shape·shape(d)

(index text v3+; phrases and `w_phrase(q)` in `text.py`, aids and parents in `aids.py`;
`words_syn` is the words part scored for the Mathlib words the query's English stands for,
`english.py`, v4+). The
aids, which are prose, are matched with the query's English words only, and weighted by their
share s(q) of the query's tokens (`text.prose_tokens`): a Lean or LaTeX formula barely
touches them. The formula-shape part (`shape.py`, v7) is the converse: n-grams of the query's
formula with variables numbered, weighted by the formula's share 1 − s(q).

A search's first stage (`rankings`, `stage.Rankings`) keeps each part's top `pool` (100 under
the ranker and under the fusion); their union is ordered by the learned ranker (`ranker.py`,
issue 45 §3; on by default where built, `weights.USE_RANKER`), else by the fusion (`stage.fuse`):

    score(d) = Σ_part  w_part / (60 + rank_part(d))   ×   (1 + β · prior(d))

with w_bm25 = 1 (the lexical ranking), w_dense = 1 (the cosine rank among the lexical top 30:
the dense part reorders what BM25 found), w_desc = the share of declarations with an informal
text (`stage.desc_weight`), and prior(d) the percentile
(0…1) of d's PageRank in the dependency graph, β = 0 by default (measured to hurt;
`prior_weight=` turns it on). A part that is absent (no embeddings built) contributes nothing.
The weights and how each was measured: `weights.py`.

Everything a query needs is memory-mapped (`lexical.py`) and loaded on first use, so a new
process answers a query in milliseconds after opening the index (`math2 search`).
"""

from __future__ import annotations

import json
import logging
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from math2.retrieval import lexical, stage
from math2.retrieval.cards import Cards
from math2.retrieval.levers import QueryLevers
from math2.retrieval.lexscore import LexicalScoring
from math2.retrieval.nameparts import FAMILIES
from math2.retrieval.stage import RRF_K, W_BM25, W_DESC, FusionWeights, Rankings, first_stage, fuse
from math2.retrieval.text import FOLD_VERSION, query_tokens
from math2.retrieval.weights import (
    BETA_PRIOR,
    RERANK_TOP,
    USE_RANKER,
    W_AIDS,
    W_BODY,
    W_DENSE,
    W_GLOSSES,
    W_GLOSSES_MEASURED,
    W_NAMESAKE,
    W_PARENTS,
    W_PARTS,
    W_PARTS_MEASURED,
    W_SHAPE,
    W_SYNONYMS,
    W_TRANSLATED,
    W_VOCABULARY,
    W_VOCABULARY_MEASURED,
)
from math2.util.construct import construct

if TYPE_CHECKING:
    from math2.retrieval.build import build_index, doc_text, name_words, pagerank
    from math2.retrieval.dense import DenseIndex
    from math2.retrieval.ranker import Ranker

log = logging.getLogger(__name__)


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


class SearchIndex(LexicalScoring):
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
        self.aids_weight, self.parents_weight = aids_weight, parents_weight
        self.synonym_weight, self.translated_weight = synonym_weight, translated_weight
        self.shape_weight, self.namesake_weight = shape_weight, namesake_weight
        self.body_weight, self.vocabulary_weight = body_weight, vocabulary_weight
        self.notation, self.renames = notation, renames
        self.parts_weight, self.glosses_weight = parts_weight, glosses_weight
        self.families = FAMILIES if families is None else families
        if use_ranker:  # the ranker's module (and its features) only where one may be used
            from math2.retrieval.ranker import RANKER_DIR

            use_ranker = (folder / RANKER_DIR).is_dir()
        if use_ranker:  # checked at open; LightGBM loads with the first query to order
            self.learned  # noqa: B018 (a ranker built for another index fails at open)
        self.use_ranker = use_ranker
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
            found.append("informal texts")
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

    def snippets(self, positions: list[int]) -> list[str]:
        """`[snippet(p) for p in positions]`, the offsets read at once."""
        return self._snippets.many(np.asarray(positions, dtype=np.int64))

    def name(self, position: int) -> str:
        """One document's name, without loading them all (the names file is mapped once)."""
        if "names" in self.__dict__ or self._name_lines is None:
            return self.names[position]
        return self._name_lines[position]

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The names of many documents (`name`, the offsets read at once)."""
        if "names" in self.__dict__ or self._name_lines is None:
            return [self.names[p] for p in positions.tolist()]
        return self._name_lines.many(positions)

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
        pool: int = stage.POOL,
        parts: tuple[str, ...] = PARTS,
        terms: bool = False,
    ) -> list[Rankings]:
        """The first stage: each part's top `pool` for every query (`stage.first_stage`).
        `terms`: keep the lexical score's terms (the ranker's features)."""
        return first_stage(self, queries, pool, parts, terms)

    def fusion_weights(self, prior_weight: float, dense_weight: float) -> FusionWeights:
        return FusionWeights(
            dense=dense_weight,
            namesake=self.namesake_weight,
            nameparts=self.parts_weight,
            glosses=self.glosses_weight,
            prior=prior_weight,
            desc=stage.desc_weight(int(self.meta.get("descriptions") or 0), len(self)),
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
        pool: int | None = None,
        parts: tuple[str, ...] = PARTS,
        prior_weight: float | None = None,
        dense_weight: float = W_DENSE,
        ranker: bool | None = None,
    ) -> list[list[Hit]]:
        """The top `k` of many queries: every part's top `pool` (the first stage, `rankings`;
        `stage.RANKER_POOL` or `POOL`), ordered by the learned ranker when `ranker` (default:
        `self.use_ranker`, where the index has one), by the fusion (`stage.fuse`) otherwise."""
        if prior_weight is None:
            # Over the full index the prior at 0.25 lowers nDCG@10 on theorem titles (0.46 ->
            # 0.35; docs/benchmarks.md, Retrieval): off unless asked for (`BETA_PRIOR`).
            prior_weight = 0.0
        ranker = self.use_ranker if ranker is None else ranker
        model = self.learned if ranker else None
        if ranker and model is None:
            from math2.retrieval.ranker import RankerMissing

            raise RankerMissing(
                f"{self.folder} has no learned ranker: build it with "
                f"`math2 index build --library {self.meta.get('source', 'mathlib')}`"
            )
        weights = self.fusion_weights(prior_weight if "prior" in parts else 0.0, dense_weight)
        pool = pool if pool is not None else (stage.RANKER_POOL if model else stage.POOL)
        ranked = self.rankings(queries, pool, parts, terms=model is not None)
        results = []
        for query, r in zip(queries, ranked, strict=True):
            scores = fuse(r, weights, self.prior)
            if model is not None:
                scores = model.scores(self, query, r, scores)
            renamed = self._follow_renames(scores) if self.renames else {}
            top = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
            at = np.array([p for p, _ in top], dtype=np.int64)
            ids, priors, names = self.ids[at].tolist(), self.prior[at].tolist(), self.names_at(at)
            lex = r.lexical.tolist() if r.lexical is not None else []
            rb_pos = {p: i for i, p in enumerate(lex)}
            rd_pos = {p: i for i, p in enumerate(r.dense.tolist())} if r.dense is not None else {}
            # built without validation (`construct`): every value is already of its field's
            # type, and validating a hundred hits costs a query as much as a tenth of its scoring
            # fmt: off
            results.append([construct(Hit, {
                "mention_id": mention_id, "name": name, "score": s, "position": p,
                "bm25_rank": rb_pos.get(p), "dense_rank": rd_pos.get(p), "prior": prior,
                "renamed_from": renamed.get(p),
            }) for (p, s), mention_id, name, prior in zip(top, ids, names, priors, strict=True)])
            # fmt: on
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
    "BETA_PRIOR", "PARTS", "RERANK_TOP", "RRF_K", "USE_RANKER", "W_AIDS", "W_BM25", "W_BODY",
    "W_DENSE", "W_DESC", "W_GLOSSES", "W_GLOSSES_MEASURED", "W_NAMESAKE", "W_PARENTS",
    "W_PARTS", "W_PARTS_MEASURED", "W_SHAPE", "W_SYNONYMS", "W_TRANSLATED", "W_VOCABULARY",
    "W_VOCABULARY_MEASURED", "Hit", "SearchIndex", "build_index", "doc_text", "name_words",
    "pagerank",
]  # fmt: skip
