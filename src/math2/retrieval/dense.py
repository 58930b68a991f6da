"""The dense part of the index: an embedding of every document and, at size, an ANN graph.

Layout under the index folder: `dense/<encoder>/chunk_NNNNN.npy` (float16 rows, written by the
resumable job of `embed_job.py`), `dense/<encoder>/digest` (which documents, model and token
budget they embed), `keys.npy` (a key per text) and `layout.json` (the chunk size). A changed
corpus or index text never mixes old rows with new ones: the old chunks are set aside in
`previous/` and a text whose key is among them takes its vector from there (`Reuse`); the rest
are encoded. And,
for `ANN_MIN` documents or more, `dense/<encoder>/ann.usearch`: an HNSW graph (usearch, cosine,
float16) over all rows, so a query costs well under a millisecond at Mathlib's size instead of
a 280k × 384 matrix product. Smaller indexes are searched exactly.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from math2.retrieval.encoder import DEFAULT_ENCODER, Encoder, load_encoder
from math2.retrieval.encoder import model_name as _model_name
from math2.store import Store

if TYPE_CHECKING:
    from usearch.index import Index

CHUNK = 4096
# Tokens per document for the encoder. bge-small at 64 tokens keeps the name, the statement and
# the start of the docstring of nearly every declaration and embeds all of Mathlib in well under
# 30 minutes on two cores (docs/benchmarks.md); the numpy MiniLM needs 32 to stay near an hour.
MAX_TOKENS = {"bge-small": 64, "minilm": 32}
ANN_MIN = 20_000
ANN_FILE = "ann.usearch"
HASHES = "keys.npy"  # one key per embedded text (`text_keys`)
PREVIOUS = "previous"  # an earlier embedding set aside while a changed corpus is embedded
ASIDE = "aside.tmp"  # where chunks are moved before they become `previous/` whole
LAYOUT = "layout.json"  # the chunk size the chunks were written with
# HNSW settings: graph degree, and the candidate lists kept while building and searching (the
# search list is raised to the pool asked for, so a pool of 100 is searched with 128 at least).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128


def dense_folder(index_folder: Path, encoder: str) -> Path:
    return index_folder / "dense" / encoder


def build_dense(
    texts: list[str],
    index_folder: Path,
    say: Callable[[str], None],
    store: Store,
    source: str,
    encoder: str = DEFAULT_ENCODER,
) -> dict[str, Any]:
    """Embed every document (resumable, a job on `math2.runs`) and build the ANN graph; returns
    what `meta.json` records of the dense part."""
    from math2.retrieval.embed_job import run_embedding

    folder = dense_folder(index_folder, encoder)
    folder.mkdir(parents=True, exist_ok=True)
    max_tokens = MAX_TOKENS.get(encoder, 64)
    model = _model_name(encoder)
    digest = embedding_digest(texts, model, max_tokens)
    digest_file = folder / "digest"
    previous = folder / PREVIOUS
    # Chunks of other documents (another digest), or chunks without a digest (a kill while an
    # embedding was being set aside): set aside, never taken for these documents' rows.
    stale = (
        digest_file.read_text().strip() != digest
        if digest_file.exists()
        else any(folder.glob("chunk_*[0-9].npy")) or (folder / ASIDE).exists()
    )
    if stale:
        _set_aside(folder, previous)
    reuse = Reuse.load(previous, model, max_tokens)  # also after a kill while re-embedding
    if stale:
        say(f"dense ({encoder}): the documents changed since the last embedding: "
            + (f"the {len(reuse.rows)} earlier embeddings are reused for the texts that did not "
               "change, the others are embedded" if reuse else "starting over"))  # fmt: skip
    (folder / LAYOUT).write_text(json.dumps({"chunk": CHUNK}))
    np.save(folder / HASHES, text_keys(texts, model, max_tokens))
    digest_file.write_text(digest)  # last: the chunks written from now on are of `digest`
    summary = run_embedding(
        store, texts, folder, encoder=encoder, chunk=CHUNK, max_tokens=max_tokens, say=say,
        params={"source": source, "index": str(index_folder)}, reuse=reuse,
    )  # fmt: skip
    if summary.failed:
        raise RuntimeError(
            f"{summary.failed} dense chunks failed: see `math2 runs show {summary.run_id}`"
        )
    if previous.exists():
        shutil.rmtree(previous)
    chunks = (len(texts) + CHUNK - 1) // CHUNK
    ann = len(texts) >= ANN_MIN
    if ann:
        ann_path = folder / ANN_FILE
        if ann_path.exists() and ann_path.stat().st_mtime >= _newest_chunk(folder):
            say(f"dense ({encoder}): ANN graph up to date")
        else:
            t0 = time.perf_counter()
            _build_ann(_vectors(folder, chunks), ann_path)
            say(f"dense ({encoder}): ANN graph over {len(texts)} rows in "
                f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    return {"encoder": encoder, "max_tokens": max_tokens, "chunks": chunks, "ann": ann}


def embedding_digest(texts: list[str], model: str, max_tokens: int) -> str:
    """What an embedding's chunks are of: the documents, the model and its token budget."""
    from math2.retrieval.embed_job import texts_digest

    return hashlib.sha256(f"{model}\0{max_tokens}\0{texts_digest(texts)}".encode()).hexdigest()


def text_keys(texts: list[str], model: str, max_tokens: int) -> np.ndarray:
    """One 16-byte key per text (SHA-256 of the model, its token budget and the text): an
    embedding is reused for a text with the same key, and only for it."""
    out = np.empty((len(texts), 16), dtype=np.uint8)
    for i, t in enumerate(texts):
        h = hashlib.sha256(f"{model}\0{max_tokens}\0{t}".encode()).digest()[:16]
        out[i] = np.frombuffer(h, np.uint8)
    return out


class Reuse:
    """The embeddings of an earlier build whose documents changed, by text key: a changed
    corpus (a new Mathlib pin, a few edited docstrings) embeds only the texts that changed."""

    def __init__(self, rows: dict[bytes, int], vectors: np.ndarray, model: str, max_tokens: int):
        self.rows = rows
        self.vectors = vectors
        self.key = (model, max_tokens)  # whose keys `rows` holds

    @classmethod
    def load(cls, previous: Path, model: str, max_tokens: int) -> Reuse | None:
        """What `_set_aside` kept — the last whole embedding in `previous/` and the chunks of an
        interrupted re-embedding in `previous/partial/` — or None where nothing was (chunks
        written before keys were recorded are not reused). A chunk that is missing or
        unreadable gives nothing; its rows are found by the chunk size recorded with it."""
        rows: dict[bytes, int] = {}
        parts: list[np.ndarray] = []
        offset = 0
        for folder in (previous, previous / "partial"):
            try:
                keys = np.load(folder / HASHES)
                layout = json.loads((folder / LAYOUT).read_text())
                chunk = int(layout["chunk"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            for f in sorted(folder.glob("chunk_*[0-9].npy")):
                try:
                    vec = np.load(f)
                    start = int(f.stem.removeprefix("chunk_")) * chunk
                except (OSError, ValueError):
                    continue
                for i, k in enumerate(keys[start : start + len(vec)]):
                    rows.setdefault(k.tobytes(), offset + i)
                parts.append(vec)
                offset += len(vec)
        return cls(rows, np.concatenate(parts), model, max_tokens) if parts else None

    def lookup(self, texts: list[str]) -> list[int | None]:
        """Each text's row among the earlier vectors, or None."""
        return [self.rows.get(k.tobytes()) for k in text_keys(texts, *self.key)]


def _set_aside(folder: Path, previous: Path) -> None:
    """Move an embedding of other documents out of the way, so that its vectors can be reused
    for the texts that did not change; kill-safe at every step. The chunks and their keys go
    to `aside.tmp/`, which becomes `previous/` whole; the digest goes last. Where `previous/`
    is already there (the last whole embedding, kept while a re-embedding ran and was killed),
    it stays, and the killed run's chunks go to `previous/partial/`."""
    aside = folder / ASIDE
    aside.mkdir(exist_ok=True)
    for f in folder.iterdir():
        whole_chunk = f.name.startswith("chunk_") and ".tmp" not in f.name
        if (f.suffix == ".npy" and (whole_chunk or f.name == HASHES)) or f.name == LAYOUT:
            f.rename(aside / f.name)
    if not previous.exists():
        aside.rename(previous)
    else:
        partial = previous / "partial"
        if partial.exists():
            shutil.rmtree(partial)
        aside.rename(partial)
    for f in folder.iterdir():
        if f.is_file() and f.name != "digest":
            f.unlink()
    (folder / "digest").unlink(missing_ok=True)


def kept_dense(
    index_folder: Path,
    info: dict[str, Any] | None,
    texts: list[str],
    encoder: str = DEFAULT_ENCODER,
) -> dict[str, Any] | None:
    """An earlier embedding, kept by a build that does not ask for one when it embeds exactly
    these documents (same digest: texts, model, token budget) and is whole: the one the index's
    meta named (`info`), else the one on disk for `encoder`; otherwise None."""
    info = info or {"encoder": encoder, "max_tokens": MAX_TOKENS.get(encoder, 64)}
    folder = dense_folder(index_folder, info["encoder"])
    digest_file = folder / "digest"
    if not digest_file.exists() or digest_file.read_text().strip() != embedding_digest(
        texts, _model_name(info["encoder"]), info.get("max_tokens", 64)
    ):
        return None
    chunks = (len(texts) + CHUNK - 1) // CHUNK
    ann = folder / ANN_FILE
    info = {
        **info,
        "chunks": chunks,
        "ann": len(texts) >= ANN_MIN
        and ann.exists()
        and ann.stat().st_mtime >= _newest_chunk(folder),
    }
    return info if DenseIndex.load(index_folder, {"dense": info}, len(texts)) else None


def _newest_chunk(folder: Path) -> float:
    return max((f.stat().st_mtime for f in folder.glob("chunk_*[0-9].npy")), default=0.0)


def _vectors(folder: Path, chunks: int) -> np.ndarray:
    files = sorted(folder.glob("chunk_*[0-9].npy"))
    if len(files) != chunks:
        raise FileNotFoundError(f"{folder}: {len(files)} of {chunks} embedding chunks present")
    return np.concatenate([np.load(f) for f in files])


def _build_ann(vectors: np.ndarray, path: Path) -> None:
    from usearch.index import Index

    ann = Index(
        ndim=vectors.shape[1], metric="cos", dtype="f16",
        connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH,
    )  # fmt: skip
    ann.add(np.arange(len(vectors), dtype=np.uint64), vectors.astype(np.float16), threads=0)
    tmp = path.with_suffix(".tmp")
    ann.save(str(tmp))
    tmp.rename(path)  # a graph is either whole or absent


class DenseIndex:
    """The loaded dense part: `rank(queries, pool)` -> top positions per query."""

    def __init__(self, index_folder: Path, info: dict[str, Any], count: int):
        self.encoder_name = info["encoder"]
        self.max_tokens = info["max_tokens"]
        folder = dense_folder(index_folder, self.encoder_name)
        self.folder = folder
        self.ann: Index | None = None
        self.vectors: np.ndarray | None = None
        if info.get("ann") and (folder / ANN_FILE).exists():
            from usearch.index import Index

            # Memory-mapped, not read: a search that only reorders the lexical top opens a
            # process in milliseconds and touches no page of the graph.
            ann = Index.restore(str(folder / ANN_FILE), view=True)
            if ann is None:
                raise FileNotFoundError(f"{folder / ANN_FILE}: not a usearch graph")
            self.ann = ann
            self.count = len(ann)
        else:
            self.vectors = _vectors(folder, info["chunks"]).astype(np.float32)
            self.count = len(self.vectors)
        if self.count != count:
            raise FileNotFoundError(f"{folder}: {self.count} rows for {count} documents")
        self._encoder: Encoder | None = None

    @classmethod
    def load(cls, index_folder: Path, meta: dict[str, Any], count: int) -> DenseIndex | None:
        """The dense part the index's meta names, or None where it is absent or incomplete."""
        info = meta.get("dense")
        if not info:
            return None
        try:
            return cls(index_folder, info, count)
        except (FileNotFoundError, ValueError, RuntimeError):
            return None

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.encoder_name, self.max_tokens)
        return self._encoder

    def _rows(self, positions: np.ndarray) -> np.ndarray:
        """Some documents' vectors (memory-mapped chunks where the graph is used)."""
        out: np.ndarray
        if self.vectors is not None:
            out = self.vectors[positions]
            return out
        if "_chunks" not in self.__dict__:
            files = sorted(self.folder.glob("chunk_*[0-9].npy"))
            self._chunks = [np.load(f, mmap_mode="r") for f in files]
        rows = [self._chunks[int(p) // CHUNK][int(p) % CHUNK] for p in positions]
        out = np.asarray(rows, dtype=np.float32).reshape(len(positions), -1)
        return out

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """The queries' unit vectors (what `rerank` compares the candidates with)."""
        return self.encoder.encode_queries(queries)

    def rerank(
        self, queries: list[str], candidates: list[np.ndarray], vectors: np.ndarray | None = None
    ) -> list[np.ndarray]:
        """Each query's candidates (document positions) in cosine order, best first;
        `vectors`: the queries already encoded (`encode_queries`)."""
        q = self.encode_queries(queries) if vectors is None else vectors
        out = []
        for vec, cand in zip(q, candidates, strict=True):
            cand = np.asarray(cand, dtype=np.int64)
            sims = self._rows(cand) @ vec if len(cand) else np.zeros(0)
            out.append(cand[np.argsort(-sims, kind="stable")])
        return out

    def rank(self, queries: list[str], pool: int) -> list[np.ndarray]:
        q = self.encoder.encode_queries(queries)
        k = min(pool, self.count)
        if self.ann is not None:
            from usearch.index import BatchMatches

            # usearch's stubs declare the property without its setter
            self.ann.expansion_search = max(EXPANSION_SEARCH, k)  # type: ignore[misc]
            found = self.ann.search(q.astype(np.float16), k, threads=1)
            if not isinstance(found, BatchMatches):  # one query: a flat `Matches`
                return [np.asarray(found.keys, dtype=np.int64)]
            keys: np.ndarray = found.keys
            return [
                np.asarray(keys[i][: found.counts[i]], dtype=np.int64) for i in range(len(queries))
            ]
        assert self.vectors is not None
        sims = q @ self.vectors.T
        out = []
        for row in sims:
            top = np.argpartition(-row, k - 1)[:k]
            out.append(top[np.argsort(-row[top])])
        return out
