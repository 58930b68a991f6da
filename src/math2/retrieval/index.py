"""The search index over mentions: lexical parts (BM25 over words, phrases and search aids) +
dense embeddings (`dense.py`) + informal descriptions + a PageRank prior over the dependency
graph.

The lexical score of a document d for a query q adds the BM25 scores of its parts:

    lex(d) = words(d) + w_phrase(q)·phrases(d) + s(q)·(w_aids·aids(d) + w_parents·parents(d))

(index text v3+; phrases and `w_phrase(q)` in `text.py`, aids and parents in `aids.py`). The
aids, which are prose, are matched with the query's English words only, and weighted by their
share s(q) of the query's tokens (`text.prose_tokens`): a Lean or LaTeX formula barely
touches them. The final ranking fuses, for a document among the union of each part's top
`pool` results,

    score(d) = Σ_part  w_part / (60 + rank_part(d))   ×   (1 + β · prior(d))

with w_bm25 = 1 (the lexical ranking), w_dense = 0.3, w_desc = 1, and prior(d) the percentile
(0…1) of d's PageRank in the dependency graph, β = 0 by default (measured to hurt;
`prior_weight=` turns it on). A part that is absent (no embeddings built) contributes nothing.

Everything a query needs is memory-mapped (`lexical.py`) and loaded on first use, so a new
process answers a query in milliseconds after opening the index (`math2 search`).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from math2.retrieval import lexical
from math2.retrieval.text import (
    TEXT_VERSION,
    dense_text,
    document_phrases,
    document_text,
    prose_tokens,
    query_phrases,
    query_tokens,
    tokens,
)

log = logging.getLogger(__name__)

RRF_K = 60
W_BM25 = 1.0
# The dense part's weight: 0.3 over the full index kept theorem titles level with BM25 (nDCG@10
# 0.524 against 0.531) and lifted plain-English descriptions (0.180 -> 0.204); at 1 titles fell
# to 0.475 (docs/benchmarks.md, Dense part).
W_DENSE = 0.3
W_DESC = 1.0
# Search aids' weights in the lexical score, measured over the full index (docs/benchmarks.md,
# issue 24): titles and main results at 0.5 lift descriptions 0.356 -> 0.394 and docstrings
# 0.193 -> 0.196 over stems alone and leave Lean and LaTeX queries level; at 2 titles fall. The
# parents' docstrings lowered titles and descriptions at every weight tried: off (still built,
# so the lever can be measured again; `SearchIndex(..., parents_weight=w)`).
W_AIDS = 0.5
W_PARENTS = 0.0
BETA_PRIOR = 0.25
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[._']+")
_IDENT = re.compile(r"[A-Za-z_][\w.'!?]*")
SNIPPET = 160


def name_words(name: str) -> str:
    """`Nat.Prime.two_le` -> `Nat Prime two le` (dots, underscores, camelCase split)."""
    return " ".join(w for w in _CAMEL.split(name.replace("_", " ")) if w)


def doc_text(name: str, statement: str | None, docstring: str | None) -> str:
    """What is indexed for one declaration (index text v1)."""
    return " ".join(x for x in (name_words(name), statement or "", docstring or "") if x)


class Hit(BaseModel):
    """One search result."""

    mention_id: int
    name: str
    score: float
    position: int = -1  # the document's position in its index
    bm25_rank: int | None = None
    dense_rank: int | None = None
    prior: float = 0.0


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
    store,
    out: Path,
    source: str = "mathlib",
    dense: bool = False,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    only: set[int] | None = None,
    *,
    hide_docstrings: set[int] | None = None,
    text_version: int = TEXT_VERSION,
    encoder: str | None = None,
    mathlib_dir: Path | None = None,
    hold_out_aids: set[str] | None = None,
) -> dict:
    """Build (or resume) the index of a source's active, completable mentions under `out`.

    `hide_docstrings`: mention ids whose docstring is left out (a held-out benchmark split);
    `text_version` 1 is the document text and tokenizer of the first index (kept to measure
    against), 2 the words described in `math2.retrieval.text`, 3 those words and the phrase
    part, 4 (the default) version 3 with Snowball stems. `encoder`: the dense part's encoder
    (`math2.retrieval.encoder.ENCODERS`). `mathlib_dir`: a Mathlib checkout whose module
    docstrings give main-result aids (`aids.py`); `hold_out_aids`: declarations whose theorem
    list titles are kept out of the aids (a benchmark's title queries).
    """
    from sqlalchemy import select

    from math2.retrieval import aids
    from math2.retrieval.dense import build_dense, kept_dense
    from math2.retrieval.encoder import DEFAULT_ENCODER
    from math2.store import ConstDep, Mention, Source

    encoder = encoder or DEFAULT_ENCODER
    say = progress or (lambda _m: None)
    out.mkdir(parents=True, exist_ok=True)
    hidden = hide_docstrings or set()
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
        doc = [None if r[0] in hidden else r[3] for r in rows]
        t0 = time.perf_counter()
        aid_titles, aid_parents = (
            aids.collect(
                s, [r[0] for r in rows], [r[1] for r in rows], doc,
                mathlib_dir if source == "mathlib" else None, hold_out_aids or set(),
            )
            if text_version >= 4
            else ({}, {})
        )  # fmt: skip
    if text_version >= 4:
        say(
            f"search aids: {len(aid_titles)} declarations with titles or main-result sentences, "
            f"{len(aid_parents)} with an enclosing declaration's docstring "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    names = [r[1] for r in rows]
    meta_path = out / "meta.json"
    old_meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if old_meta and (
        old_meta.get("count") != len(ids)
        or old_meta.get("first_last") != [int(ids[0]), int(ids[-1])]
    ):
        say("the store changed since the last index: rebuilding from scratch")
    stemmed = text_version >= 4
    t0 = time.perf_counter()
    if text_version == 1:
        texts = [doc_text(r[1], r[2], d) for r, d in zip(rows, doc, strict=True)]
        lexical.build(_v1_tokens(texts), out / "bm25")
    else:
        texts = [document_text(r[1], r[2], d, r[4]) for r, d in zip(rows, doc, strict=True)]
        lexical.build([tokens(t, stemmed) for t in texts], out / "bm25")
    say(f"BM25 over {len(texts)} declarations in {time.perf_counter() - t0:.1f} s")
    _clear(out / "phrase")
    if text_version >= 3:
        t0 = time.perf_counter()
        lexical.build(
            [document_phrases(r[1], d, stemmed) for r, d in zip(rows, doc, strict=True)],
            out / "phrase",
        )
        say(f"BM25 over their phrases in {time.perf_counter() - t0:.1f} s")
    for part, texts_by_pos in (("aids", aid_titles), ("parents", aid_parents)):
        _clear(out / part)
        if texts_by_pos:
            lexical.build(
                [tokens(texts_by_pos.get(i, ""), stemmed) for i in range(len(rows))], out / part
            )
    # Informal descriptions by the informalize role: their own BM25 part, fused like the others.
    desc_pos = [i for i, r in enumerate(rows) if r[0] in descriptions]
    _clear(out / "desc")
    if desc_pos:
        lexical.build([tokens(descriptions[rows[i][0]], stemmed) for i in desc_pos], out / "desc")
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
    _write_lines(out / "names", names)
    _write_lines(out / "snippets", [" ".join((r[2] or "").split())[:SNIPPET] for r in rows])
    meta = {
        "source": source,
        "count": len(ids),
        "edges": len(src_e),
        "first_last": [int(ids[0]), int(ids[-1])] if len(ids) else [0, 0],
        "dense_chunks": 0,
        "dense": None,
        "text_version": text_version,
        "descriptions": len(desc_pos),
        "aids": len(aid_titles),
        "parents": len(aid_parents),
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


def _clear(folder: Path) -> None:
    for f in folder.glob("*") if folder.exists() else []:
        f.unlink()


def _v1_tokens(texts: list[str]) -> list[list[str]]:
    """The first index's tokens: bm25s's default tokenizer with English stop words."""
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", show_progress=False, return_ids=False)


def _write_lines(stem: Path, lines: list[str]) -> None:
    """One line per document and their byte offsets (`<stem>.txt`, `<stem>.npy`)."""
    blobs = [ln.replace("\n", " ").encode() + b"\n" for ln in lines]
    stem.with_suffix(".txt").write_bytes(b"".join(blobs))
    np.save(stem.with_suffix(".npy"), np.cumsum([0] + [len(b) for b in blobs], dtype=np.int64))


def _descriptions(s) -> dict[int, str]:
    """The newest description or informal statement the informalize role wrote for each mention
    (agent text, a search aid only: never node text), whatever its review status, except
    rejected ones."""
    from sqlalchemy import select

    from math2.store import AgentText, AgentTextKind
    from math2.store.work import ReviewStatus

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


PARTS = ("bm25", "dense", "desc", "prior", "aids", "parents")


class SearchIndex:
    """A built index, opened lazily: `search(query, k)` and `search_batch(queries, k)`.

    Opening reads `meta.json` only; each part is memory-mapped the first time a query needs
    it. `aids_weight` and `parents_weight` set the aids' weights in the lexical score."""

    def __init__(
        self, folder: Path, aids_weight: float = W_AIDS, parents_weight: float = W_PARENTS
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
        self.aids_weight = aids_weight
        self.parents_weight = parents_weight

    def __len__(self) -> int:
        return int(self.meta["count"])

    @cached_property
    def ids(self) -> np.ndarray:
        return np.load(self.folder / "ids.npy", mmap_mode="r")

    @cached_property
    def names(self) -> list[str]:
        return json.loads((self.folder / "names.json").read_text())

    @cached_property
    def prior(self) -> np.ndarray:
        return np.load(self.folder / "prior.npy", mmap_mode="r")

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
    def parents(self) -> lexical.Lexical | None:
        return self._part("parents")

    @cached_property
    def desc(self) -> lexical.Lexical | None:
        return self._part("desc") if self.meta.get("descriptions") else None

    @cached_property
    def desc_pos(self) -> np.ndarray:
        return np.load(self.folder / "desc" / "positions.npy")

    @cached_property
    def dense(self):
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
        ):
            if w > 0 and lexical.exists(self.folder / folder):
                found.append(label)
        if self.meta.get("dense"):
            found.append("dense")
        if self.meta.get("descriptions"):
            found.append("descriptions")
        return found

    def _line(self, stem: str, position: int) -> str:
        starts = np.load(self.folder / f"{stem}.npy", mmap_mode="r")
        with open(self.folder / f"{stem}.txt", "rb") as f:
            f.seek(int(starts[position]))
            return f.read(int(starts[position + 1] - starts[position])).decode().rstrip("\n")

    def snippet(self, position: int) -> str:
        """The start of a document's statement (stored beside the index)."""
        return self._line("snippets", position)

    def name(self, position: int) -> str:
        """One document's name, without loading them all."""
        if "names" in self.__dict__ or not (self.folder / "names.txt").exists():
            return self.names[position]
        return self._line("names", position)

    def _query_tokens(self, query: str) -> list[str]:
        if self.text_version == 1:
            return _v1_tokens([query])[0]
        return query_tokens(query, self.stemmed)

    def lexical_scores(self, query: str, use_aids: bool = True) -> np.ndarray:
        """The lexical score of every document (see the module docstring)."""
        toks = self._query_tokens(query)
        score = self.bm25.scores(toks)
        if self.phrase is not None:
            ptoks, weight = query_phrases(query, self.stemmed)
            if weight > 0:
                score = score + weight * self.phrase.scores(ptoks)
        if use_aids and (self.aids is not None or self.parents is not None):
            words, share = prose_tokens(query, self.stemmed)
            for part, w in ((self.aids, self.aids_weight), (self.parents, self.parents_weight)):
                if part is not None and w > 0 and words:
                    score = score + w * share * part.scores(words)
        return score

    def coverage(self, query: str, positions: np.ndarray) -> np.ndarray:
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
        return [self.desc_pos[self.desc.top(query_tokens(q, self.stemmed), pool)] for q in queries]

    def rank_dense(self, queries: list[str], pool: int) -> list[np.ndarray]:
        """Top `pool` document positions per query by cosine similarity (ANN at size)."""
        if not self.meta.get("dense") or self.dense is None:
            return [np.zeros(0, dtype=np.int64) for _ in queries]
        return self.dense.rank(queries, pool)

    def search_batch(
        self,
        queries: list[str],
        k: int = 10,
        pool: int = 100,
        parts: tuple[str, ...] = PARTS,
        prior_weight: float | None = None,
        dense_weight: float = W_DENSE,
    ) -> list[list[Hit]]:
        """Fused results for many queries at once (the encoder runs batched)."""
        if prior_weight is None:
            # Over the full index the prior at 0.25 lowers nDCG@10 on theorem titles with BM25
            # alone (0.46 -> 0.35) and with BM25 + dense (0.475 -> 0.393; docs/benchmarks.md,
            # Retrieval): it is off unless asked for (`prior_weight=BETA_PRIOR`).
            prior_weight = 0.0
        use_aids = "aids" in parts or "parents" in parts
        n = len(queries)
        b = self.rank_bm25(queries, pool, use_aids) if "bm25" in parts else [None] * n
        d = self.rank_dense(queries, pool) if "dense" in parts else [None] * n
        x = self.rank_desc(queries, pool) if "desc" in parts else [None] * n
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
            if "prior" in parts and prior_weight:
                for p in scores:
                    scores[p] *= 1.0 + prior_weight * float(self.prior[p])
            top = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
            results.append(
                [
                    Hit(
                        mention_id=int(self.ids[p]),
                        name=self.name(p),
                        score=s,
                        position=p,
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
