"""Building a library's search index (`build_index`): what is read from the store
(`corpus.py`), the lexical parts (`parts.py`), issue 33's levers (`levers.py`), the informal
texts (`informal.py`), the PageRank prior (`prior.py`), the cards a hit shows (`cards.py`), when
asked the dense part (`dense.py`), and last the learned ranker (`ranker.py`). What the parts are
and how a query fuses them: `math2.retrieval.index`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from math2.retrieval import lexical
from math2.retrieval.corpus import Corpus, read_corpus
from math2.retrieval.informal import build_informal
from math2.retrieval.levers import build_levers
from math2.retrieval.parts import (
    Tokenizer,
    bm25,
    build_by_position,
    build_phrases,
    build_shape,
    build_words,
    clear,
    doc_text,
    each,
    name_words,
)
from math2.retrieval.prior import dependency_prior, pagerank
from math2.retrieval.text import (
    FOLD_VERSION,
    LEVER_VERSION,
    LEVERS,
    SHAPE_VERSION,
    TEXT_VERSION,
    dense_text,
)
from math2.util.progress import stage

if TYPE_CHECKING:
    from math2.store import Store

SNIPPET = 160
# Kinds whose source text says something after their signature (`importers.lean_bodies`).
_SAY = frozenset({"def", "abbrev", "irreducible_def", "structure", "class", "inductive"})

__all__ = ["build_index", "build_shape", "doc_text", "name_words", "pagerank"]


class StaleImport(LookupError):
    """The store holds a library as an older version of its scanner read it."""


def stale_import(store: Store, source: str) -> None:
    """Raise StaleImport where the store's `source` was read by another version of the Lean
    scanner than this math2's (`lean_source.READER`): its declarations (a structure's fields,
    issue 45) are not what this math2 would index, and the index would say nothing of it."""
    from math2.importers.common import recorded_readers
    from math2.importers.lean_source import READER

    with store.session() as s:
        old = sorted(r for r in recorded_readers(s, source) if r.split()[0] == READER.split()[0])
    if old and old != [READER]:
        raise StaleImport(
            f"the store's {source} was read by {', '.join(old)}; this math2 reads {READER}: "
            f"run `math2 import {source}` (it reads the checkout again), then build the index"
        )


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
    functor_bodies: bool = False,
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
    benchmark's title queries). `functor_bodies`: keep Rocq functor-body declarations that a
    module includes under its own name (left out by default, `corpus.py`).
    """
    from math2.retrieval import cards
    from math2.retrieval.dense import build_dense, kept_dense
    from math2.retrieval.encoder import DEFAULT_ENCODER

    encoder = encoder or DEFAULT_ENCODER
    stale_import(store, source)
    # a library's index reads only its own checkout (issue 45 §6: set.mm's read Mathlib's)
    own_dir = mathlib_dir if source == "mathlib" else None
    levers = (LEVERS if levers is None else levers) if text_version >= LEVER_VERSION else None
    say = progress or (lambda _m: None)
    out.mkdir(parents=True, exist_ok=True)
    tag = f"index {source}"
    corpus = read_corpus(
        store, source, text_version=text_version, levers=bool(levers), limit=limit, only=only,
        hidden=hide_docstrings, own_dir=own_dir, hold_out_aids=hold_out_aids,
        functor_bodies=functor_bodies, say=say, tag=tag,
    )  # fmt: skip
    rows, doc = corpus.rows, corpus.docs
    ids = np.array([r.id for r in rows], dtype=np.int64)
    names = [r.name for r in rows]
    kinds = [r.kind for r in rows]
    meta_path = out / "meta.json"
    old_meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if old_meta and (
        old_meta.get("count") != len(ids)
        or old_meta.get("first_last") != [int(ids[0]), int(ids[-1])]
    ):
        say("the store changed since the last index: rebuilding from scratch")
    extras = [r.extra if levers else {} for r in rows]
    bodies: list[list[str]] = [
        list(e.get("body") or []) if levers and "body" in levers else [] for e in extras
    ]
    if levers and "body" in levers and not any(bodies) and any(k in _SAY for k in kinds):
        say(
            f"{tag}: no definition has a recorded body (the store was imported before issue 33):"
            " what definitions say is not indexed; `math2 build` (or `math2 import`) reads the"
            " checkout again with this version's scanner and records them"
        )
    lever_meta: dict[str, Any] = {}
    notation = None
    if levers is not None:
        successors = {
            i: e["successor"] for i, e in enumerate(extras)
            if e.get("deprecated_since") and e.get("successor")
        }  # fmt: skip
        notation, lever_meta = build_levers(
            out, names, kinds, successors, doc, own_dir, levers, say, tag, corpus.declared
        )
    tok = Tokenizer(text_version >= 4, text_version >= FOLD_VERSION, notation)
    described = _lexical_parts(corpus, out, tag, text_version, tok, bodies, say)

    prior, edges = dependency_prior(rows, corpus.deps, tag)
    np.save(out / "prior.npy", prior)
    np.save(out / "ids.npy", ids)
    (out / "names.json").write_text(json.dumps(names))
    lexical.write_lines(out / "names", names)
    lexical.write_lines(out / "snippets", [" ".join((r.statement or "").split())[:SNIPPET]
                                            for r in rows])  # fmt: skip
    cards.write(out, kinds, [r.module for r in rows], doc, [r.extra for r in rows])
    meta = {
        "source": source,
        "count": len(ids),
        "edges": edges,
        "first_last": [int(ids[0]), int(ids[-1])] if len(ids) else [0, 0],
        "dense_chunks": 0,
        "dense": None,
        "text_version": text_version,
        "descriptions": described,
        "aids": len(corpus.aid_titles),
        "parents": len(corpus.aid_parents),
        "functor_bodies_left_out": corpus.functor_bodies_left_out,
        "built_at": time.time(),
        **lever_meta,
    }

    def dense_texts() -> list[str]:
        pairs = list(zip(rows, doc, strict=True))
        return [dense_text(r.name, r.statement, d) for r, d in each(pairs, f"{tag}: dense texts")]

    if dense is None:  # an embedding kept from an earlier build, if it embeds these documents
        meta["dense"] = kept_dense(out, old_meta.get("dense"), dense_texts(), encoder)
        meta["dense_chunks"] = meta["dense"]["chunks"] if meta["dense"] else 0
    meta_path.write_text(json.dumps(meta))
    if dense:
        meta["dense"] = build_dense(dense_texts(), out, say, store, source, encoder)
        meta["dense_chunks"] = meta["dense"]["chunks"]
        meta_path.write_text(json.dumps(meta))
    if text_version >= LEVER_VERSION:  # last: the ranker records the digest of meta.json
        ranker_meta = _ranker(out, dict(zip(names, kinds, strict=True)), ranker_sets, say, tag)
        meta["ranker"] = ranker_meta["queries"] if ranker_meta else None
    return meta


def _lexical_parts(
    corpus: Corpus, out: Path, tag: str, text_version: int, tok: Tokenizer,
    bodies: list[list[str]], say: Callable[[str], None],
) -> int:  # fmt: skip
    """Every BM25 part of the index (words, bodies, phrases, shapes, aids, informal texts);
    how many declarations have informal text."""
    rows, doc = corpus.rows, corpus.docs
    t0 = time.perf_counter()
    build_words(rows, doc, out, tag, text_version, tok)
    clear(out / "body")
    if any(bodies):  # what definitions say: a words part of its own (`W_BODY`)
        bm25([tok.body(b) for b in bodies], out / "body", f"{tag}: BM25 over bodies")
    say(f"BM25 over {len(rows)} declarations in {time.perf_counter() - t0:.1f} s")
    clear(out / "phrase")
    if text_version >= 3:
        t0 = time.perf_counter()
        build_phrases(rows, doc, out, tag, tok)
        say(f"BM25 over their phrases in {time.perf_counter() - t0:.1f} s")
    clear(out / "shape")
    if text_version >= SHAPE_VERSION:
        t0 = time.perf_counter()
        build_shape([r.statement for r in rows], out, tag, bodies, [r.kind for r in rows])
        say(f"BM25 over their formula shapes in {time.perf_counter() - t0:.1f} s")
    for part, texts in (("aids", corpus.aid_titles), ("parents", corpus.aid_parents)):
        build_by_position(texts, len(rows), out / part, f"{tag}: BM25 over {part}", tok)
    return build_informal([r.id for r in rows], corpus.informal, out, tag, tok, say)


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
