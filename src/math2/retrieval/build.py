"""Building a library's search index (`build_index`): the lexical parts, the search aids,
informal descriptions, the PageRank prior and, when asked, the dense part. What the parts are
and how a query fuses them: `math2.retrieval.index`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from math2.lean.syntax import Scope, constants_of, split_identifier
from math2.retrieval import lexical
from math2.retrieval.aliases import borrow as borrow_alias_texts
from math2.retrieval.levers import build_levers
from math2.retrieval.notation import NotationTable, stored_notation
from math2.retrieval.shape import definition_shape_tokens, shape_tokens
from math2.retrieval.text import (
    ALIAS_VERSION,
    FOLD_VERSION,
    LEVER_VERSION,
    LEVERS,
    SHAPE_VERSION,
    TEXT_VERSION,
    constant_words,
    dense_text,
    document_phrases,
    document_text,
    tokens,
    v1_tokens,
)
from math2.util.progress import heartbeat, stage, track

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from math2.store import Store

T = TypeVar("T")
SNIPPET = 160
BATCH = 1000  # declarations between two counts of a stage (a count per item costs more)


def name_words(name: str) -> str:
    """`Nat.Prime.two_le` -> `Nat Prime two le` (index text v1: `split_identifier`, case kept,
    capital runs not split)."""
    return " ".join(split_identifier(name, lower=False, acronyms=False))


def doc_text(name: str, statement: str | None, docstring: str | None) -> str:
    """What is indexed for one declaration (index text v1)."""
    return " ".join(x for x in (name_words(name), statement or "", docstring or "") if x)


def pagerank(
    edges_src: np.ndarray,
    edges_dst: np.ndarray,
    n: int,
    damping: float = 0.85,
    iters: int = 50,
    label: str = "PageRank",
) -> np.ndarray:
    """PageRank by power iteration on a sparse graph (dangling mass spread evenly); each
    iteration counted as a stage named `label`."""
    from scipy.sparse import csr_matrix

    if n == 0:
        return np.zeros(0)
    out_deg = np.bincount(edges_src, minlength=n).astype(np.float64)
    w = np.ones(len(edges_src)) / np.maximum(out_deg[edges_src], 1)
    m = csr_matrix((w, (edges_dst, edges_src)), shape=(n, n))
    r = np.full(n, 1.0 / n)
    dangling = out_deg == 0
    for _ in track(range(iters), label, unit="iterations"):
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
    dense: bool | None = None,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    only: set[int] | None = None,
    *,
    hide_docstrings: set[int] | None = None,
    text_version: int = TEXT_VERSION,
    encoder: str | None = None,
    mathlib_dir: Path | None = None,
    hold_out_aids: set[str] | None = None,
    levers: frozenset[str] | None = None,
    ranker_sets: Path | None = None,
) -> dict[str, Any]:
    """Build (or resume) the index of a source's active, completable mentions under `out`.

    `dense`: True embeds every document (resuming, reusing vectors of unchanged texts), False
    leaves the dense part out of this index (its files stay for a later reuse), None keeps an
    earlier build's embedding when it embeds exactly these documents.
    `hide_docstrings`: mention ids whose docstring is left out (a held-out benchmark split);
    `text_version` 1 is the document text and tokenizer of the first index (kept to measure
    against), 2 the words described in `math2.retrieval.text`, 3 those words and the phrase
    part, 4 version 3 with Snowball stems, 5 (constants read by the Lean lexer), 6 (accents
    folded), 7 (+ the formula-shape part, `shape.py`), 8 (aliases indexed with their targets'
    statements, `aliases.py`) and 9 (the default: issue 33's levers, `levers.py`).
    `levers`: which of version 9's document-side levers to build (`text.LEVERS`, all by
    default; a benchmark builds them one at a time).
    `ranker_sets`: the dev sets the learned ranker is trained on (`devsets.py`; default the
    ones math2 ships), after everything else (version 9+; none where too few are answered).
    `encoder`: the dense part's encoder (`math2.retrieval.encoder.ENCODERS`). `mathlib_dir`: a
    Mathlib checkout whose module docstrings give main-result aids (`aids.py`);
    `hold_out_aids`: declarations whose theorem list titles are kept out of the aids (a
    benchmark's title queries).
    """
    from sqlalchemy import select

    from math2.retrieval import aids, cards
    from math2.retrieval.dense import build_dense, kept_dense
    from math2.retrieval.encoder import DEFAULT_ENCODER
    from math2.store import ConstDep, Mention, Source

    encoder = encoder or DEFAULT_ENCODER
    # a library's index reads only its own checkout (issue 45 §6: set.mm's read Mathlib's)
    own_dir = mathlib_dir if source == "mathlib" else None
    levers = (LEVERS if levers is None else levers) if text_version >= LEVER_VERSION else None
    say = progress or (lambda _m: None)
    out.mkdir(parents=True, exist_ok=True)
    hidden = hide_docstrings or set()
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == source))
        if src is None:
            raise LookupError(f"source {source!r} is not in the store")
        q = (
            select(
                Mention.id,
                Mention.name,
                Mention.statement,
                Mention.docstring,
                Mention.module,
                Mention.kind,
                Mention.extra if levers else Mention.kind,
            )
            .where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
            .order_by(Mention.id)
        )
        tag = f"index {source}"
        rows: list[tuple[Any, ...]] = list(
            track(
                s.execute(q.limit(limit) if limit else q).tuples(),
                f"{tag}: read declarations",
                unit="declarations",
                batch=BATCH,
            )
        )
        if only is not None:  # a sub-corpus (benchmarks index a pool of mention ids)
            rows = [r for r in rows if r[0] in only]
        with stage(f"{tag}: read dependencies and descriptions"):
            deps = dict(s.execute(select(ConstDep.mention_id, ConstDep.deps)).all())
            descriptions = _descriptions(s)
        if not rows:
            raise LookupError(f"{source} has no active, completable mentions to index")
        doc = [None if r[0] in hidden else r[3] for r in rows]
        t0 = time.perf_counter()
        aid_titles, aid_parents = (
            aids.collect(
                s, [r[0] for r in rows], [r[1] for r in rows], doc,
                own_dir, hold_out_aids or set(), tag,
            )
            if text_version >= 4
            else ({}, {})
        )  # fmt: skip
        # Mathlib's notation commands as its import read them: the checkout is not read again
        declared = stored_notation(s, src.id) if levers and source == "mathlib" else None
        targets = (
            {
                mid: ((extra or {}).get("successor"), (extra or {}).get("alias_direction"))
                for mid, extra in s.execute(
                    select(Mention.id, Mention.extra).where(
                        Mention.source_id == src.id, Mention.kind == "alias"
                    )
                )
            }
            if text_version >= ALIAS_VERSION
            else {}
        )
    if targets:
        at = {r[0]: i for i, r in enumerate(rows)}
        stmts, doc, borrowed = borrow_alias_texts(
            [r[1] for r in rows], [r[2] for r in rows], doc,
            {at[m]: (str(t[0]), t[1]) for m, t in targets.items() if m in at and t[0]},
            {at[m] for m in hidden if m in at},
        )  # fmt: skip
        rows = [(r[0], r[1], st, *r[3:]) for r, st in zip(rows, stmts, strict=True)]
        say(f"aliases: {borrowed} given their target's statement")
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
    folded = text_version >= FOLD_VERSION
    extras = [r[6] if levers and isinstance(r[6], dict) else {} for r in rows]
    bodies: list[list[str]] = [
        list(e.get("body") or []) if levers and "body" in levers else [] for e in extras
    ]
    if levers and "body" in levers and not any(bodies) and any(r[5] in _SAY for r in rows):
        say(
            f"{tag}: no definition has a recorded body (the store was imported before issue 33):"
            " what definitions say is not indexed; `math2 build` (or `math2 import`) reads the"
            " checkout again with this version's scanner and records them"
        )
    notation: NotationTable | None = None
    lever_meta: dict[str, Any] = {}
    if levers is not None:
        successors = {
            i: e["successor"] for i, e in enumerate(extras)
            if e.get("deprecated_since") and e.get("successor")
        }  # fmt: skip
        notation, lever_meta = build_levers(
            out, names, [r[5] for r in rows], successors, doc, own_dir, levers, say, tag, declared
        )

    def words_of(r: tuple[Any, ...], d: str | None) -> list[str]:
        toks = tokens(document_text(r[1], r[2], d, r[4]), stemmed, folded)
        if notation is not None and r[2]:
            toks += notation.tokens(r[2], lambda t: tokens(t, stemmed, folded))
        return toks

    def body_words(body: list[str]) -> list[str]:
        said = " ; ".join(body)
        toks = tokens(f"{said} {constant_words(said)}", stemmed, folded)
        if notation is not None:
            toks += notation.tokens(said, lambda t: tokens(t, stemmed, folded))
        return toks

    t0 = time.perf_counter()
    pairs = list(zip(rows, doc, strict=True))
    if text_version == 1:
        texts = [doc_text(r[1], r[2], d) for r, d in _each(pairs, f"{tag}: words")]
        _bm25(v1_tokens(texts), out / "bm25", f"{tag}: BM25 over words")
    else:
        words = [words_of(r, d) for r, d in _each(pairs, f"{tag}: words")]
        _bm25(words, out / "bm25", f"{tag}: BM25 over words")
        del words
    _clear(out / "body")
    if any(bodies):  # what definitions say: a words part of its own (`W_BODY`)
        _bm25([body_words(b) for b in bodies], out / "body", f"{tag}: BM25 over bodies")
    say(f"BM25 over {len(rows)} declarations in {time.perf_counter() - t0:.1f} s")
    _clear(out / "phrase")
    if text_version >= 3:
        t0 = time.perf_counter()
        phrases = [
            document_phrases(r[1], d, stemmed, folded) for r, d in _each(pairs, f"{tag}: phrases")
        ]
        _bm25(phrases, out / "phrase", f"{tag}: BM25 over phrases")
        del phrases
        say(f"BM25 over their phrases in {time.perf_counter() - t0:.1f} s")
    _clear(out / "shape")
    if text_version >= SHAPE_VERSION:
        t0 = time.perf_counter()
        build_shape([r[2] for r in rows], out, tag, bodies, [r[5] for r in rows])
        say(f"BM25 over their formula shapes in {time.perf_counter() - t0:.1f} s")
    for part, texts_by_pos in (("aids", aid_titles), ("parents", aid_parents)):
        _clear(out / part)
        if texts_by_pos:
            _bm25(
                [tokens(texts_by_pos.get(i, ""), stemmed, folded) for i in range(len(rows))],
                out / part,
                f"{tag}: BM25 over {part}",
            )
    # Informal descriptions by the informalize role: their own BM25 part, fused like the others.
    desc_pos = [i for i, r in enumerate(rows) if r[0] in descriptions]
    _clear(out / "desc")
    if desc_pos:
        _bm25(
            [tokens(descriptions[rows[i][0]], stemmed, folded) for i in desc_pos],
            out / "desc",
            f"{tag}: BM25 over informal descriptions",
        )
        np.save(out / "desc" / "positions.npy", np.array(desc_pos, dtype=np.int64))
        say(f"BM25 over {len(desc_pos)} informal descriptions")

    # Prior: PageRank over "uses" edges.
    pos = {n: i for i, n in enumerate(names)}
    src_e, dst_e = [], []
    by_short: dict[str, list[str]] = {}
    for n in names:
        by_short.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    for i, r in _each(list(enumerate(rows)), f"{tag}: prior's edges"):
        used = deps.get(r[0])
        if used is None:
            used = constants_of(r[2], Scope.of(names[i], pos, short=by_short))
        for t in set(used):
            j = pos.get(t)
            if j is not None and j != i:
                src_e.append(i)
                dst_e.append(j)
    pr = pagerank(
        np.array(src_e, dtype=np.int64),
        np.array(dst_e, dtype=np.int64),
        len(names),
        label=f"{tag}: PageRank prior",
    )
    np.save(out / "prior.npy", _percentile(pr).astype(np.float32))
    np.save(out / "ids.npy", ids)
    (out / "names.json").write_text(json.dumps(names))
    lexical.write_lines(out / "names", names)
    lexical.write_lines(out / "snippets", [" ".join((r[2] or "").split())[:SNIPPET] for r in rows])
    cards.write(out, [r[5] for r in rows], [r[4] for r in rows], doc)
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
        **lever_meta,
    }

    def dense_texts() -> list[str]:
        return [dense_text(r[1], r[2], d) for r, d in _each(pairs, f"{tag}: dense texts")]

    if dense is None:  # an embedding kept from an earlier build, if it embeds these documents
        meta["dense"] = kept_dense(out, old_meta.get("dense"), dense_texts(), encoder)
        meta["dense_chunks"] = meta["dense"]["chunks"] if meta["dense"] else 0
    meta_path.write_text(json.dumps(meta))
    if dense:
        meta["dense"] = build_dense(dense_texts(), out, say, store, source, encoder)
        meta["dense_chunks"] = meta["dense"]["chunks"]
        meta_path.write_text(json.dumps(meta))
    if text_version >= LEVER_VERSION:  # last: the ranker records the digest of meta.json
        ranker_meta = _ranker(out, dict(zip(names, [r[5] for r in rows], strict=True)),
                              ranker_sets, say, tag)  # fmt: skip
        meta["ranker"] = ranker_meta["queries"] if ranker_meta else None
    return meta


def _ranker(
    out: Path,
    kinds: dict[str, str | None],
    sets: Path | None,
    say: Callable[[str], None],
    tag: str,
) -> dict[str, Any] | None:
    """The learned ranker of the index at `out`, trained on the dev sets (`ranker.py`)."""
    from math2.retrieval.devsets import devsets_dir, read_devsets
    from math2.retrieval.index import SearchIndex
    from math2.retrieval.ranker import build_ranker

    items = read_devsets(sets or devsets_dir(), kinds)
    with stage(f"{tag}: learned ranker"):
        return build_ranker(SearchIndex(out, use_ranker=False), items, say)


def build_shape(
    statements: list[str | None],
    out: Path,
    tag: str = "index",
    bodies: list[list[str]] | None = None,
    kinds: list[str | None] | None = None,
) -> None:
    """The formula-shape part (`shape/`, index text v7): BM25 over each statement's shape
    n-grams (`math2.retrieval.shape`), one document per statement, in index order; with
    `bodies` (v9) also the shapes of what each definition says."""
    _clear(out / "shape")
    each = track(statements, f"{tag}: shapes", unit="declarations", batch=BATCH)
    grams = [shape_tokens(st) for st in each]
    for i, body in enumerate(bodies or []):
        if body:
            grams[i] += definition_shape_tokens(statements[i], body, kinds[i] if kinds else None)
    _bm25(grams, out / "shape", f"{tag}: BM25 over formula shapes")


def _each(items: list[T], name: str) -> Iterator[T]:
    """`items` counted as a stage of declarations."""
    return track(items, name, unit="declarations", batch=BATCH)


# Kinds whose source text says something after their signature (`importers.lean_bodies`).
_SAY = frozenset({"def", "abbrev", "irreducible_def", "structure", "class", "inductive"})


def _bm25(docs: list[list[str]], folder: Path, name: str) -> None:
    """bm25s over tokenised documents, a stage that counts nothing inside: a line on time."""
    with stage(name) as st, heartbeat(st):
        st.update(note=f"{len(docs)} documents")
        lexical.build(docs, folder)


def _clear(folder: Path) -> None:
    for f in folder.glob("*") if folder.exists() else []:
        f.unlink()


def _descriptions(s: Session) -> dict[int, str]:
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
    return {mid: body for mid, body in rows if mid is not None}
