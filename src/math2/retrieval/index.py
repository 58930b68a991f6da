"""The search index over mentions: BM25 (bm25s) + dense embeddings (`dense.py`) + a PageRank prior
over the dependency graph, fused by weighted reciprocal rank.

Fusion, for a document d among the union of each part's top `pool` results:

    score(d) = Σ_part  w_part / (60 + rank_part(d))   ×   (1 + β · prior(d))

with w_bm25 = 1, w_dense = 0.3, w_desc = 1, and prior(d) the percentile (0…1) of d's PageRank in
the dependency graph (lean_scout const_dep, or the names each source statement uses), β = 0 by
default (measured to hurt; `prior_weight=` turns it on). A part that is absent (no embeddings
built) simply contributes nothing.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from sqlalchemy import select

from math2.retrieval.dense import DenseIndex, build_dense, kept_dense
from math2.retrieval.encoder import DEFAULT_ENCODER
from math2.retrieval.text import (
    TEXT_VERSION,
    dense_text,
    document_phrases,
    document_text,
    query_phrases,
    query_tokens,
    tokens,
)
from math2.store import AgentText, AgentTextKind, ConstDep, Mention, Source, Store
from math2.store.work import ReviewStatus

log = logging.getLogger(__name__)

RRF_K = 60
W_BM25 = 1.0
# The dense part's weight: 0.3 over the full index kept theorem titles level with BM25 (nDCG@10
# 0.524 against 0.531) and lifted plain-English descriptions (0.180 -> 0.204); at 1 titles fell
# to 0.475 (docs/benchmarks.md, Dense part).
W_DENSE = 0.3
W_DESC = 1.0
BETA_PRIOR = 0.25
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[._']+")
_IDENT = re.compile(r"[A-Za-z_][\w.'!?]*")


def name_words(name: str) -> str:
    """`Nat.Prime.two_le` -> `Nat Prime two le` (dots, underscores, camelCase split)."""
    return " ".join(w for w in _CAMEL.split(name.replace("_", " ")) if w)


def doc_text(name: str, statement: str | None, docstring: str | None) -> str:
    """What is indexed for one declaration."""
    return " ".join(x for x in (name_words(name), statement or "", docstring or "") if x)


class Hit(BaseModel):
    """One search result."""

    mention_id: int
    name: str
    score: float
    bm25_rank: int | None = None
    dense_rank: int | None = None
    prior: float = 0.0


@dataclass
class IndexData:
    ids: np.ndarray  # mention ids, in index order
    names: list[str]


def pagerank(
    edges_src: np.ndarray, edges_dst: np.ndarray, n: int, damping: float = 0.85, iters: int = 50
) -> np.ndarray:
    """PageRank by power iteration on a sparse graph (dangling mass spread evenly)."""
    from scipy.sparse import csr_matrix

    if n == 0:
        return np.zeros(0)
    out_deg = np.bincount(edges_src, minlength=n).astype(np.float64)
    w = np.ones(len(edges_src)) / np.maximum(out_deg[edges_src], 1)
    m = csr_matrix((w, (edges_dst, edges_src)), shape=(n, n))
    r = np.full(n, 1.0 / n)
    dangling = out_deg == 0
    for _ in range(iters):
        r_new = damping * (m @ r + r[dangling].sum() / n) + (1 - damping) / n
        if np.abs(r_new - r).sum() < 1e-10:
            r = r_new
            break
        r = r_new
    return r


def _percentile(x: np.ndarray) -> np.ndarray:
    if len(x) == 0:
        return x
    order = np.argsort(x, kind="stable")
    p = np.empty(len(x))
    p[order] = np.arange(len(x)) / max(1, len(x) - 1)
    return p


def build_index(
    store: Store,
    out: Path,
    source: str = "mathlib",
    dense: bool = True,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    only: set[int] | None = None,
    *,
    hide_docstrings: set[int] | None = None,
    text_version: int = TEXT_VERSION,
    encoder: str = DEFAULT_ENCODER,
) -> dict:
    """Build (or resume) the index of a source's active, completable mentions under `out`.

    `hide_docstrings`: mention ids whose docstring is left out (a held-out benchmark split);
    `text_version` 1 is the document text and tokenizer of the first index (kept to measure
    against), 2 the words described in `math2.retrieval.text`, 3 (the default) those words and
    the phrase part. `encoder`: the dense part's encoder (`math2.retrieval.encoder.ENCODERS`).
    """

    import bm25s

    say = progress or (lambda _m: None)
    out.mkdir(parents=True, exist_ok=True)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == source))
        if src is None:
            raise LookupError(f"source {source!r} is not in the store")
        q = (
            select(Mention.id, Mention.name, Mention.statement, Mention.docstring, Mention.module)
            .where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
            .order_by(Mention.id)
        )
        rows = s.execute(q.limit(limit) if limit else q).all()
        if only is not None:  # a sub-corpus (benchmarks index a pool of mention ids)
            rows = [r for r in rows if r[0] in only]
        deps = dict(s.execute(select(ConstDep.mention_id, ConstDep.deps)).all())
        descriptions = _descriptions(s)
    if not rows:
        raise LookupError(f"{source} has no active, completable mentions to index")
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    names = [r[1] for r in rows]
    meta_path = out / "meta.json"
    old_meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if old_meta and (
        old_meta.get("count") != len(ids)
        or old_meta.get("first_last") != [int(ids[0]), int(ids[-1])]
    ):
        say("the store changed since the last index: rebuilding from scratch")
    hidden = hide_docstrings or set()
    doc = [None if r[0] in hidden else r[3] for r in rows]
    if text_version == 1:
        texts = [doc_text(r[1], r[2], d) for r, d in zip(rows, doc, strict=True)]
    else:
        texts = [document_text(r[1], r[2], d, r[4]) for r, d in zip(rows, doc, strict=True)]
    t0 = time.perf_counter()
    _bm25_index(texts, text_version).save(str(out / "bm25"))
    say(f"BM25 over {len(texts)} declarations in {time.perf_counter() - t0:.1f} s")
    for f in (out / "phrase").glob("*") if (out / "phrase").exists() else []:
        f.unlink()
    if text_version >= 3:
        t0 = time.perf_counter()
        phrase = bm25s.BM25()
        phrase.index(
            [document_phrases(r[1], d) or ["∅"] for r, d in zip(rows, doc, strict=True)],
            show_progress=False,
        )
        phrase.save(str(out / "phrase"))
        say(f"BM25 over their phrases in {time.perf_counter() - t0:.1f} s")
    # Informal descriptions by the informalize role: their own BM25 part, fused like the others.
    desc_pos = [i for i, r in enumerate(rows) if r[0] in descriptions]
    for f in (out / "desc").glob("*") if (out / "desc").exists() else []:
        f.unlink()
    if desc_pos:
        _bm25_index([descriptions[rows[i][0]] for i in desc_pos], TEXT_VERSION).save(
            str(out / "desc")
        )
        np.save(out / "desc" / "positions.npy", np.array(desc_pos, dtype=np.int64))
        say(f"BM25 over {len(desc_pos)} informal descriptions")

    # Prior: PageRank over "uses" edges.
    pos = {n: i for i, n in enumerate(names)}
    src_e, dst_e = [], []
    by_short: dict[str, int] = {}
    for i, n in enumerate(names):
        short = n.rsplit(".", 1)[-1]
        by_short[short] = -1 if short in by_short else i
    for i, r in enumerate(rows):
        used = deps.get(r[0])
        targets = used if used is not None else _IDENT.findall(r[2] or "")
        for t in set(targets):
            j = pos.get(t)
            if j is None and used is None:
                j = by_short.get(t.rsplit(".", 1)[-1])
                j = None if j == -1 else j
            if j is not None and j != i:
                src_e.append(i)
                dst_e.append(j)
    pr = pagerank(np.array(src_e, dtype=np.int64), np.array(dst_e, dtype=np.int64), len(names))
    np.save(out / "prior.npy", _percentile(pr).astype(np.float32))
    np.save(out / "ids.npy", ids)
    (out / "names.json").write_text(json.dumps(names))
    meta = {
        "source": source,
        "count": len(ids),
        "edges": len(src_e),
        "first_last": [int(ids[0]), int(ids[-1])] if len(ids) else [0, 0],
        "dense_chunks": 0,
        "dense": None,
        "text_version": text_version,
        "descriptions": len(desc_pos),
        "built_at": time.time(),
    }

    def dense_texts() -> list[str]:
        return [dense_text(r[1], r[2], d) for r, d in zip(rows, doc, strict=True)]

    if not dense:  # an embedding kept from an earlier build, if it embeds these very documents
        meta["dense"] = kept_dense(out, old_meta.get("dense"), dense_texts())
        meta["dense_chunks"] = meta["dense"]["chunks"] if meta["dense"] else 0
    meta_path.write_text(json.dumps(meta))
    if dense:
        meta["dense"] = build_dense(dense_texts(), out, say, store, source, encoder)
        meta["dense_chunks"] = meta["dense"]["chunks"]
        meta_path.write_text(json.dumps(meta))
    return meta


def _descriptions(s) -> dict[int, str]:
    """The newest description or informal statement the informalize role wrote for each mention
    (agent text, a search aid only: never node text), whatever its review status, except
    rejected ones."""
    rows = s.execute(
        select(AgentText.mention_id, AgentText.body)
        .where(
            AgentText.kind.in_([AgentTextKind.DESCRIPTION, AgentTextKind.INFORMAL_STATEMENT]),
            AgentText.mention_id.is_not(None),
            AgentText.status != ReviewStatus.REJECTED,
        )
        .order_by(AgentText.id)
    ).all()
    return {mid: body for mid, body in rows}


def _bm25_index(texts: list[str], text_version: int):
    import bm25s

    retriever = bm25s.BM25()
    if text_version == 1:
        toks = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    else:
        toks = [tokens(t) or ["∅"] for t in texts]
    retriever.index(toks, show_progress=False)
    return retriever


def _scores(bm25, toks: list[str], n: int) -> np.ndarray:
    """BM25 score of every document for the query tokens the index knows (zeros if none)."""
    vocab = bm25.vocab_dict
    known = [t for t in toks if t in vocab]
    if not known:
        return np.zeros(n, dtype=np.float32)
    return bm25.get_scores(known)


class SearchIndex:
    """A loaded index: `search(query, k)` and `search_batch(queries, k)`."""

    def __init__(self, folder: Path):
        import bm25s

        self.folder = folder
        meta = json.loads((folder / "meta.json").read_text())
        self.ids = np.load(folder / "ids.npy")
        self.names: list[str] = json.loads((folder / "names.json").read_text())
        self.prior = np.load(folder / "prior.npy")
        self.bm25 = bm25s.BM25.load(str(folder / "bm25"))
        self.text_version = meta.get("text_version", 1)
        self.phrase = None
        if self.text_version >= 3 and (folder / "phrase").exists():
            self.phrase = bm25s.BM25.load(str(folder / "phrase"))
        self.desc = self.desc_pos = None
        if meta.get("descriptions") and (folder / "desc" / "positions.npy").exists():
            self.desc = bm25s.BM25.load(str(folder / "desc"))
            self.desc_pos = np.load(folder / "desc" / "positions.npy")
        self.dense = DenseIndex.load(folder, meta, len(self.ids))

    @property
    def has_dense(self) -> bool:
        """Whether embeddings are present for every document."""
        return self.dense is not None

    def rank_bm25(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by BM25."""
        if self.phrase is not None:
            return [self._rank_phrased(q, pool) for q in queries]
        return self._rank(self.bm25, queries, pool, len(self.ids), self.text_version)

    def _rank_phrased(self, query: str, pool: int) -> np.ndarray:
        """Word score + weighted phrase score (index text version 3), top `pool` positions."""
        score = _scores(self.bm25, query_tokens(query), len(self.ids))
        toks, weight = query_phrases(query)
        if weight > 0:
            score = score + weight * _scores(self.phrase, toks, len(self.ids))
        k = min(pool, len(score))
        top = np.argpartition(-score, k - 1)[:k]
        top = top[np.argsort(-score[top], kind="stable")]
        return top[score[top] > 0]

    def rank_desc(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by BM25 over the informal descriptions."""
        if self.desc is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        ranked = self._rank(self.desc, queries, pool, len(self.desc_pos), 2)
        return [self.desc_pos[r] for r in ranked]

    @staticmethod
    def _rank(bm25, queries: list[str], pool: int, n: int, version: int) -> list[np.ndarray]:
        import bm25s

        if version == 1:
            toks = bm25s.tokenize(queries, stopwords="en", show_progress=False)
        else:  # a query with no known token matches nothing (never an error)
            vocab = bm25.vocab_dict
            toks = [[t for t in query_tokens(q) if t in vocab] or ["∅"] for q in queries]
        docs, scores = bm25.retrieve(toks, k=min(pool, n), show_progress=False, n_threads=1)
        return [d[s > 0] for d, s in zip(docs, scores, strict=True)]

    def rank_dense(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by cosine similarity (ANN at size)."""
        if self.dense is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        return self.dense.rank(queries, pool)

    def search_batch(
        self,
        queries: list[str],
        k: int = 10,
        pool: int = 100,
        parts: tuple[str, ...] = ("bm25", "dense", "desc", "prior"),
        prior_weight: float | None = None,
        dense_weight: float = W_DENSE,
    ) -> list[list[Hit]]:
        """Fused results for many queries at once (BM25 and the encoder run batched)."""
        if prior_weight is None:
            # Over the full index the prior at 0.25 lowers nDCG@10 on theorem titles with BM25
            # alone (0.46 -> 0.35) and with BM25 + dense (0.475 -> 0.393; docs/benchmarks.md,
            # Retrieval): it is off unless asked for (`prior_weight=BETA_PRIOR`).
            prior_weight = 0.0
        b = self.rank_bm25(queries, pool) if "bm25" in parts else [None] * len(queries)
        d = self.rank_dense(queries, pool) if "dense" in parts else [None] * len(queries)
        x = self.rank_desc(queries, pool) if "desc" in parts else [None] * len(queries)
        results = []
        for rb, rd, rx in zip(b, d, x, strict=True):
            scores: dict[int, float] = {}
            rb_pos = {int(p): r for r, p in enumerate(rb)} if rb is not None else {}
            rd_pos = {int(p): r for r, p in enumerate(rd)} if rd is not None else {}
            for p, r in rb_pos.items():
                scores[p] = scores.get(p, 0.0) + W_BM25 / (RRF_K + r + 1)
            for p, r in rd_pos.items():
                scores[p] = scores.get(p, 0.0) + dense_weight / (RRF_K + r + 1)
            for r, p in enumerate(rx if rx is not None else []):
                scores[int(p)] = scores.get(int(p), 0.0) + W_DESC / (RRF_K + r + 1)
            if "prior" in parts:
                for p in scores:
                    scores[p] *= 1.0 + prior_weight * float(self.prior[p])
            top = sorted(scores.items(), key=lambda kv: -kv[1])[:k]
            results.append(
                [
                    Hit(
                        mention_id=int(self.ids[p]),
                        name=self.names[p],
                        score=s,
                        bm25_rank=rb_pos.get(p),
                        dense_rank=rd_pos.get(p),
                        prior=float(self.prior[p]),
                    )
                    for p, s in top
                ]
            )
        return results

    def search(self, query: str, k: int = 10, **kw) -> list[Hit]:
        """Fused results for one query."""
        return self.search_batch([query], k, **kw)[0]
