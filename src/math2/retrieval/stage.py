"""The first stage of a search: each part's own ranking of one query (`Rankings`), and the
hand-tuned fusion of them (`fuse`, the default ordering and the learned ranker's baseline).

The candidates of a query are the union of every part's top `pool` (`Rankings.candidates`): a
declaration one part finds is never lost before it is ordered, whether by `fuse` or by the
learned ranker (`ranker.py`, issue 45 §3).

    fuse(d) = Σ_part  w_part / (60 + rank_part(d))   ×   (1 + β · prior(d))

(`index.py`'s module docstring says what each part is and why its weight is what it is.)
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from math2.retrieval import lexical

if TYPE_CHECKING:
    from math2.retrieval.index import SearchIndex

RRF_K = 60
# Each part's top that the first stage keeps: `POOL` for the fusion, `RANKER_POOL` where the
# learned ranker orders the candidates (issue 45 §3, branch qual45f: an answer among the
# candidates of 803, 838, 861 of the 1,003 dev queries at 100, 200, 300; the ranker's nDCG@10
# under grouped cross-validation 0.520, 0.527, 0.529 at 1.0, ~1.2, ~1.4 × the CPU a query;
# 100 is shipped: the wider pools' gain is within noise and 200 put the p95 CPU a query over
# the 20 ms goal, docs/benchmarks.md "the ranker's width").
POOL = 100
RANKER_POOL = 100
# The weighted terms of the lexical score (`SearchIndex.lexical_parts`), in this order.
LEXICAL_TERMS = ("words", "synonyms", "vocabulary", "body", "phrases", "shape", "aids", "parents")
W_BM25 = 1.0
W_DESC = 1.0

_EMPTY = np.zeros(0, dtype=np.int64)
_ENCODER_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="math2-query-encoder")


@dataclass
class Rankings:
    """One query's rankings, each a best-first array of document positions (empty where the
    part is absent or not asked for). `lexical`: the lexical score's top; `terms`: the lexical
    score's weighted terms over every document (`SearchIndex.lexical_parts`), kept only when
    the learned ranker reads them."""

    lexical: np.ndarray | None = None
    dense: np.ndarray | None = None
    desc: np.ndarray = field(default_factory=lambda: _EMPTY)
    namesakes: list[tuple[int, float]] = field(default_factory=list)
    nameparts: np.ndarray = field(default_factory=lambda: _EMPTY)
    glosses: np.ndarray = field(default_factory=lambda: _EMPTY)
    terms: dict[str, np.ndarray] = field(default_factory=dict)
    lexical_score: np.ndarray | None = None
    nameparts_score: np.ndarray | None = None  # over every document, where asked for
    glosses_score: np.ndarray | None = None

    def shared_ranks(self, part: str) -> np.ndarray:
        """The ranks of a part's top with ties sharing the best of their ranks: the name-part
        and gloss rankings give hundreds of names one score (every `…exp…` name for `exp`),
        and the order among them is only their order in the index."""
        ranking: np.ndarray = getattr(self, part)
        score: np.ndarray | None = getattr(self, f"{part}_score")
        if score is None or len(ranking) == 0:
            return np.arange(len(ranking))
        v = -score[ranking]
        ranks: np.ndarray = np.searchsorted(v, v, side="left")
        return ranks

    def tops(self, k: int | None = None) -> list[np.ndarray]:
        """Each part's ranked positions (its first `k`, or all of them)."""
        found = [
            r[:k]
            for r in (self.lexical, self.dense, self.desc, self.nameparts, self.glosses)
            if r is not None and len(r)
        ]
        found.append(np.asarray([p for p, _ in self.namesakes[:k]], dtype=np.int64))
        return found

    def candidates(self) -> np.ndarray:
        """Every position some part ranks (the union of their tops), ascending."""
        return sorted_unique(np.concatenate(self.tops()))


def sorted_unique(positions: np.ndarray) -> np.ndarray:
    """`positions` sorted, each once: by hand, as numpy 2's `np.unique` imports numpy.ma, 0.01 s
    of a cold `math2 search`'s CPU (issue 45 §6)."""
    every = np.sort(positions)
    return every[np.concatenate(([True], every[1:] != every[:-1]))] if len(every) else every


@dataclass(frozen=True)
class FusionWeights:
    """The weights `fuse` gives each ranking (`index.py` says how each was measured)."""

    dense: float
    namesake: float
    nameparts: float
    glosses: float
    prior: float = 0.0
    desc: float = W_DESC


def desc_weight(described: int, count: int) -> float:
    """The informal part's weight in the fusion: `W_DESC` times the share of the library's
    declarations it holds a text for. A part over a few texts ranks some of them first for
    almost any query, and a reciprocal rank over 12 documents is no rank over 280,000: at full
    weight 12 SmolLM2 texts took a top-10 place in 677 of 1,003 dev queries and cost the fusion
    0.054 nDCG@10 (docs/benchmarks.md, `inf45`). A part over the whole library keeps its full
    weight; the learned ranker reads the part's rank as a feature and weighs it itself."""
    return W_DESC * min(1.0, described / count) if count > 0 else 0.0


def fuse(r: Rankings, w: FusionWeights, prior: np.ndarray) -> dict[int, float]:
    """The fused score of every position some part ranks (reciprocal ranks, weighted)."""
    scores: dict[int, float] = {}
    for ranking, weight in ((r.lexical, W_BM25), (r.dense, w.dense), (r.desc, w.desc)):
        if ranking is None or weight <= 0:
            continue
        for rank, p in enumerate(ranking.tolist()):
            scores[p] = scores.get(p, 0.0) + weight / (RRF_K + rank + 1)
    for part, weight in (("nameparts", w.nameparts), ("glosses", w.glosses)):
        if weight <= 0:
            continue
        ranking = getattr(r, part)
        for rank, p in zip(r.shared_ranks(part).tolist(), ranking.tolist(), strict=True):
            scores[p] = scores.get(p, 0.0) + weight / (RRF_K + rank + 1)
    for rank, (p, cover) in enumerate(r.namesakes):
        scores[p] = scores.get(p, 0.0) + w.namesake * cover / (RRF_K + rank + 1)
    if w.prior:
        for p in scores:
            scores[p] *= 1.0 + w.prior * float(prior[p])
    return scores


def first_stage(
    ix: SearchIndex,
    queries: list[str],
    pool: int,
    parts: tuple[str, ...],
    terms: bool,
) -> list[Rankings]:
    """Each part's top `pool` for every query of `ix` (the encoder runs batched); `terms`:
    keep the lexical score's terms (the ranker's features)."""
    use_aids = "aids" in parts or "parents" in parts
    n = len(queries)
    # The encoder reads the queries while the lexical parts are scored (onnxruntime lets
    # go of the GIL): a search with the dense part costs the longer of the two, not both.
    dense = ix.dense if "dense" in parts and "bm25" in parts and ix.has_dense else None
    encoding = None
    if dense is not None:
        encoding = _ENCODER_THREAD.submit(dense.encode_queries, queries)
    out = [Rankings() for _ in queries]
    if "bm25" in parts:
        for q, r in zip(queries, out, strict=True):
            if terms:
                r.terms = ix.lexical_parts(q, use_aids)
                r.lexical_score = lexical.total(r.terms.values())
                r.lexical = lexical.top_positions(r.lexical_score, pool)
            else:
                r.lexical = lexical.top_positions(ix.lexical_scores(q, use_aids), pool)
    if "dense" in parts and "bm25" in parts:
        lex = [r.lexical for r in out if r.lexical is not None]
        vectors = encoding.result() if encoding is not None else None
        for r, d in zip(out, ix.rerank_dense(queries, ix._candidates(queries, lex),
                                               vectors), strict=True):  # fmt: skip
            r.dense = d
    elif "dense" in parts:
        for r, d in zip(out, ix.rank_dense(queries, pool), strict=True):
            r.dense = d
    if "desc" in parts:
        for r, d in zip(out, ix.rank_desc(queries, pool), strict=True):
            r.desc = d
    for q, r in zip(queries, out, strict=True):
        if ix.namesake_weight > 0 and "bm25" in parts and ix.text_version >= 9:
            r.namesakes = ix.levers.namesakes(q, ix.prior, ix.notation)
        # the name parts and glosses are read where fused or where the ranker reads them
        if ix.text_version >= 9 and "nameparts" in parts and (
            ix.parts_weight > 0 or terms):  # fmt: skip
            r.nameparts_score = ix.levers.score_parts(q, ix.families)
            if r.nameparts_score is not None:
                r.nameparts = lexical.top_positions(r.nameparts_score, pool)
        if ix.text_version >= 9 and "glosses" in parts and (
            ix.glosses_weight > 0 or terms):  # fmt: skip
            r.glosses_score = ix.levers.score_glosses(q)
            if r.glosses_score is not None:
                r.glosses = lexical.top_positions(r.glosses_score, pool)
    assert len(out) == n
    return out
