"""The search index on the fixture project: BM25, dense, prior, fusion, resumable embedding."""

from pathlib import Path

import numpy as np
import pytest

from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import (
    SearchIndex,
    build_index,
    doc_text,
    name_words,
    pagerank,
)
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def encoder_or_skip(name: str = "minilm"):
    from math2.retrieval.encoder import EncoderUnavailable, load_encoder

    try:
        return load_encoder(name, 64)
    except EncoderUnavailable:
        import os

        if os.environ.get("CI"):
            raise
        pytest.skip(f"the {name} encoder's weights are not installed")


def test_name_words_and_doc_text() -> None:
    assert name_words("Nat.Prime.two_le") == "Nat Prime two le"
    assert name_words("IsOpen.inter") == "Is Open inter"
    assert doc_text("a_b", ": x = x", None) == "a b : x = x"


def test_pagerank_prefers_what_is_used() -> None:
    # 0 -> 2, 1 -> 2, 2 -> 3: 3 and 2 collect rank, 0 and 1 none.
    r = pagerank(np.array([0, 1, 2]), np.array([2, 2, 3]), 4)
    assert r.argmax() == 3 and r[2] > r[0] and abs(r.sum() - 1) < 1e-6


@pytest.mark.parametrize("name", ["minilm", "bge-small"])
def test_encoder_paraphrases_are_closer(name: str) -> None:
    enc = encoder_or_skip(name)
    v = enc.encode(
        [
            "a group homomorphism preserves multiplication",
            "a morphism of groups maps products to products",
            "there are infinitely many prime numbers",
        ]
    )
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2] + 0.1


def test_bge_queries_find_their_passages() -> None:
    """Queries carry bge's search instruction, documents do not; each query's best passage is
    its own, and the order of a batch does not change a vector."""
    enc = encoder_or_skip("bge-small")
    docs = [
        "Nat.Prime.two_le : a prime number is at least two",
        "Finset.sum_range_succ : the sum over range (n + 1) splits off the last term",
        "IsOpen.inter : the intersection of two open sets is open",
    ]
    queries = ["every prime is at least 2", "sum up to n plus one", "open sets intersect"]
    d, q = enc.encode(docs), enc.encode_queries(queries)
    assert list((q @ d.T).argmax(1)) == [0, 1, 2]
    assert np.allclose(enc.encode(docs[::-1])[::-1], d, atol=1e-5)
    assert not np.allclose(enc.encode(queries), q, atol=1e-3)  # the instruction is there


def test_unknown_encoder_is_refused() -> None:
    from math2.retrieval.encoder import load_encoder

    with pytest.raises(ValueError, match="unknown encoder 'nope'"):
        load_encoder("nope", 32)


@pytest.fixture
def index(sqlite_store, tmp_path: Path) -> Path:
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(sqlite_store, manifest.get("mathlib"), FIX)
    encoder_or_skip("bge-small")
    build_index(sqlite_store, tmp_path / "ix", dense=True)
    return tmp_path / "ix"


def _chunks(index: Path, encoder: str = "bge-small") -> list[Path]:
    return sorted((index / "dense" / encoder).glob("chunk_*[0-9].npy"))


def test_fused_search(index: Path) -> None:
    ix = SearchIndex(index)
    assert ix.has_dense and len(ix.ids) == 20
    hits = ix.search("add comm: addition of natural numbers commutes", k=3)
    assert hits[0].name in ("Demo.add_comm'", "Demo.add_comm_old")
    assert hits[0].bm25_rank is not None and hits[0].dense_rank is not None
    # the dense part alone finds a paraphrase with no word in common with the name
    dense_only = ix.search("open subsets", k=3, parts=("dense",))
    assert "Top.Space.IsOpen" in [h.name for h in dense_only]
    batch = ix.search_batch(["identity function", "open set"], k=2)
    assert len(batch) == 2 and all(len(b) == 2 for b in batch)


def test_dense_embedding_resumes(index: Path, sqlite_store) -> None:
    [chunk] = _chunks(index)
    before = chunk.stat().st_mtime_ns
    build_index(sqlite_store, index, dense=True)  # nothing to do: the chunk is whole
    assert chunk.stat().st_mtime_ns == before
    chunk.unlink()  # as if the run was killed before this chunk finished
    build_index(sqlite_store, index, dense=True)
    assert chunk.exists() and SearchIndex(index).has_dense


def test_http_endpoint(index: Path) -> None:
    from fastapi.testclient import TestClient

    from math2.retrieval import NoIndex, Searcher
    from math2.retrieval.server import make_app

    searcher = Searcher(index.parent)
    with TestClient(make_app(searcher, index.name)) as c:
        assert c.get("/health").json()["documents"] == 20
        r = c.get("/search", params={"q": "identity function", "k": 2})
        assert r.status_code == 200 and len(r.json()["hits"]) == 2
        assert r.json()["hits"][0]["name"].startswith("Demo.")
        assert r.json()["hits"] == [  # what `math2 search --json` prints: a rank, no bare score
            h.summary(i).model_dump()
            for i, h in enumerate(searcher.search("identity function", index.name, 2), 1)
        ]
        assert "score" not in r.json()["hits"][0] and r.json()["hits"][1]["rank"] == 2
        assert c.get("/search", params={"q": "x", "k": 0}).status_code == 400
        assert c.get("/search", params={"q": " "}).status_code == 400
        assert c.get("/nope").status_code == 404
    with pytest.raises(NoIndex, match="No search index is built for 'nope'"):
        make_app(searcher, "nope")


def test_dense_embedding_is_a_run(index: Path, sqlite_store) -> None:
    """The embedding is a job of math2.runs: each chunk a run item, visible and resumable."""
    from sqlalchemy import select

    from math2.runs import list_runs
    from math2.store import RunItem

    with sqlite_store.session() as s:
        [run] = list_runs(s, "embed")
        items = s.scalars(select(RunItem).where(RunItem.run_id == run.id)).all()
    assert run.items == {"done": len(items)} and len(items) >= 1
    assert all(i.item.startswith("chunk_") and i.result["rows"] > 0 for i in items)


def test_ann_graph_gives_the_exact_ranking(index: Path, sqlite_store, monkeypatch) -> None:
    """At size the dense part is searched through an HNSW graph; on the fixture (forced over
    the threshold) it finds the same neighbours as the exact matrix product."""
    from math2.retrieval import dense

    queries = ["open subsets", "identity function", "addition commutes", "prime numbers"]
    exact = SearchIndex(index)
    assert exact.dense.ann is None
    want = exact.rank_dense(queries, 5)
    # one at a time too (int8 activations are quantised per batch: a lone query's vector differs
    # slightly from its vector in a batch, so it is compared with the exact ranking of itself)
    want_one = [list(exact.rank_dense([q], 5)[0]) for q in queries]
    monkeypatch.setattr(dense, "ANN_MIN", 1)
    meta = build_index(sqlite_store, index, dense=True)
    assert meta["dense"]["ann"] and (index / "dense" / "bge-small" / dense.ANN_FILE).exists()
    ann = SearchIndex(index)
    assert ann.dense.ann is not None and ann.dense.vectors is None
    got = ann.rank_dense(queries, 5)
    assert [list(g) for g in got] == [list(w) for w in want]
    assert [list(ann.rank_dense([q], 5)[0]) for q in queries] == want_one
    assert ann.search("open subsets", k=3)[0].dense_rank is not None


def _all_ids(index: Path) -> set[int]:
    return {int(i) for i in SearchIndex(index).ids}


def test_changed_documents_are_embedded_again(index: Path, sqlite_store) -> None:
    """Chunk files of other documents (docstrings held out here) are never reused."""
    [chunk] = _chunks(index)
    before = np.load(chunk)
    build_index(sqlite_store, index, dense=True, hide_docstrings=_all_ids(index))
    [again] = _chunks(index)
    assert not np.array_equal(np.load(again), before)
    assert SearchIndex(index).has_dense


def test_a_build_without_dense_keeps_a_matching_embedding(index: Path, sqlite_store) -> None:
    build_index(sqlite_store, index)  # same documents: the embedding still holds
    assert SearchIndex(index).has_dense
    build_index(sqlite_store, index, dense=False)  # asked to leave it out
    assert not SearchIndex(index).has_dense
    build_index(sqlite_store, index)  # its files stayed: kept again
    assert SearchIndex(index).has_dense
    build_index(sqlite_store, index, hide_docstrings=_all_ids(index))  # other documents
    assert not SearchIndex(index).has_dense


def test_minilm_index_beside_bge(index: Path, sqlite_store) -> None:
    """Another encoder is another run and another folder: neither overwrites the other."""
    encoder_or_skip("minilm")
    meta = build_index(sqlite_store, index, dense=True, encoder="minilm")
    assert meta["dense"]["encoder"] == "minilm" and _chunks(index, "minilm") and _chunks(index)
    hits = SearchIndex(index).search("open subsets", k=3, parts=("dense",))
    assert "Top.Space.IsOpen" in [h.name for h in hits]
    from math2.runs import list_runs

    with sqlite_store.session() as s:
        assert len(list_runs(s, "embed")) == 2


def test_the_dense_part_reorders_the_lexical_top(index: Path) -> None:
    from math2.retrieval.index import RERANK_TOP

    ix = SearchIndex(index)
    q = "identity function"
    [lex] = ix.rank_bm25([q], 100)
    [cand] = ix._candidates([q], [lex])
    # the words' top first, then the dense part's nearest where the words found fewer
    assert list(cand[: min(len(lex), RERANK_TOP)]) == list(lex[:RERANK_TOP])
    assert len(set(cand.tolist())) == len(cand) <= RERANK_TOP
    [order] = ix.rerank_dense([q], [cand])
    assert sorted(order.tolist()) == sorted(cand.tolist())
    hits = ix.search(q, k=len(cand))
    by_pos = {h.position: h for h in hits}
    assert all(by_pos[int(p)].dense_rank == r for r, p in enumerate(order) if int(p) in by_pos)


def test_a_changed_corpus_embeds_only_the_texts_that_changed(
    index: Path, sqlite_store, monkeypatch
) -> None:
    """Vectors of texts that did not change are reused (by text key), the others encoded; the
    result equals a fresh embedding of the new documents."""
    encoded = _counting_encoder(monkeypatch)
    indexed = _all_ids(index)
    with sqlite_store.session() as s:
        one = next(
            m.id for m in s.query(Mention).order_by(Mention.id) if m.id in indexed and m.docstring
        )
        docstring = s.get(Mention, one).docstring
    build_index(sqlite_store, index, dense=True, hide_docstrings={one})  # one text changes
    assert len(encoded) == 1 and docstring not in encoded[0], encoded
    assert not (index / "dense" / "bge-small" / "previous").exists()
    reused = np.load(_chunks(index)[0]).astype(np.float32)
    # a fresh embedding of the same documents, from nothing
    fresh = index.parent / "fresh"
    build_index(sqlite_store, fresh, dense=True, hide_docstrings={one})
    assert len(encoded) == 1 + len(_all_ids(index))
    assert np.abs(np.load(_chunks(fresh)[0]).astype(np.float32) - reused).max() < 0.05
    assert SearchIndex(index).has_dense


def _counting_encoder(monkeypatch) -> list[str]:
    from math2.retrieval import encoder as enc_mod

    encoded: list[str] = []
    real = enc_mod.load_encoder

    def counting(name, max_length):
        e = real(name, max_length)
        inner = e.encode

        def encode(texts, *a, **kw):
            encoded.extend(texts)
            return inner(texts, *a, **kw)

        e.encode = encode
        return e

    monkeypatch.setattr(enc_mod, "load_encoder", counting)
    return encoded


def test_chunks_without_a_digest_are_not_taken_for_these_documents(
    index: Path, sqlite_store, monkeypatch
) -> None:
    """Chunk files with no digest (an embedding of other documents, left by a kill or an
    older math2) are set aside; these documents get their own vectors."""
    want = np.load(_chunks(index)[0]).astype(np.float32)
    build_index(sqlite_store, index, dense=True, hide_docstrings=_all_ids(index))  # others
    (index / "dense" / "bge-small" / "digest").unlink()
    encoded = _counting_encoder(monkeypatch)
    build_index(sqlite_store, index, dense=True)
    got = np.load(_chunks(index)[0]).astype(np.float32)
    assert np.abs(got - want).max() < 0.05 and encoded  # re-encoded, not the others' rows


def test_a_killed_re_embedding_keeps_the_last_whole_one(
    index: Path, sqlite_store, monkeypatch
) -> None:
    """Killed while re-embedding a changed corpus, then built for the first corpus again: the
    set-aside embedding is still there and answers every text (nothing is encoded)."""
    from math2.retrieval import embed_job

    def killed(*a, **kw):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(embed_job, "run_embedding", killed)
        with pytest.raises(KeyboardInterrupt):
            build_index(sqlite_store, index, dense=True, hide_docstrings=_all_ids(index))
    folder = index / "dense" / "bge-small"
    assert (folder / "previous" / "keys.npy").exists() and not _chunks(index)
    encoded = _counting_encoder(monkeypatch)
    build_index(sqlite_store, index, dense=True)
    assert encoded == [] and SearchIndex(index).has_dense
    assert not (folder / "previous").exists()
