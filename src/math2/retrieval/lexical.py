"""A BM25 index on disk that a new process can query in milliseconds: bm25s builds it, this
module stores and reads it memory-mapped.

bm25s keeps, for every token, the BM25 weight it gives each document that contains it (a
compressed sparse matrix: `indptr[t]:indptr[t+1]` slices `indices` (documents) and `data`
(weights)). A query's score is the sum of its tokens' slices. Loading bm25s's own files parses
its vocabulary as one JSON object (13 MB, about 0.35 s for all of Mathlib); here the vocabulary
is a sorted, newline-separated UTF-8 file searched by bisection through `mmap`, and the three
arrays are `.npy` files opened with `mmap_mode="r"`, so opening an index reads a few pages and a
query reads only the slices of its tokens.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

FORMAT = "math2-lexical-1"


def build(docs: list[list[str]], folder: Path) -> int:
    """Index tokenised documents with bm25s and save them under `folder`; the vocabulary size."""
    import bm25s

    retriever = bm25s.BM25()
    quiet = logging.getLogger("bm25s")
    level = quiet.level
    quiet.setLevel(max(level, logging.INFO))  # its "Building index from tokens" debug line
    try:
        retriever.index([d or ["∅"] for d in docs], show_progress=False)
    finally:
        quiet.setLevel(level)
    folder.mkdir(parents=True, exist_ok=True)
    sc = retriever.scores
    np.save(folder / "data.npy", np.asarray(sc["data"], dtype=np.float32))
    np.save(folder / "indices.npy", np.asarray(sc["indices"], dtype=np.int32))
    np.save(folder / "indptr.npy", np.asarray(sc["indptr"], dtype=np.int64))
    vocab = sorted((t, i) for t, i in retriever.vocab_dict.items() if t and "\n" not in t)
    blob = "\n".join(t for t, _ in vocab).encode()
    (folder / "vocab.txt").write_bytes(blob)
    starts = np.zeros(len(vocab) + 1, dtype=np.int64)
    pos = 0
    for k, (t, _) in enumerate(vocab):
        starts[k] = pos
        pos += len(t.encode()) + 1
    starts[len(vocab)] = pos
    np.save(folder / "vocab_starts.npy", starts)
    np.save(folder / "vocab_ids.npy", np.array([i for _, i in vocab], dtype=np.int64))
    (folder / "params.json").write_text(
        json.dumps({"format": FORMAT, "num_docs": int(sc["num_docs"]), "vocab": len(vocab)})
    )
    return len(vocab)


SEEN = 50_000  # token lookups a `Lexical` remembers (a few MB at most)


def mapped(path: Path) -> np.ndarray:
    """An `.npy` file memory-mapped read-only, as a plain array over the map: numpy's memmap
    subclass runs Python code on every element read and slice, which a query does thousands of
    times (the map stays open as the array's base)."""
    array: np.ndarray = np.load(path, mmap_mode="r").view(np.ndarray)
    return array


def exists(folder: Path) -> bool:
    """Whether `folder` holds an index in this format."""
    p = folder / "params.json"
    return p.exists() and json.loads(p.read_text()).get("format") == FORMAT


class Lexical:
    """One memory-mapped BM25 index: `scores(tokens)` over every document."""

    def __init__(self, folder: Path):
        params = json.loads((folder / "params.json").read_text())
        if params.get("format") != FORMAT:
            raise ValueError(f"{folder} is not a {FORMAT} index: rebuild it (math2 index build)")
        self.num_docs = int(params["num_docs"])
        self.data = mapped(folder / "data.npy")
        self.indices = mapped(folder / "indices.npy")
        self.indptr = mapped(folder / "indptr.npy")
        self._starts = mapped(folder / "vocab_starts.npy")
        self._ids = mapped(folder / "vocab_ids.npy")
        self._n = len(self._ids)
        self._fh = open(folder / "vocab.txt", "rb")  # noqa: SIM115 (held for the mmap)
        size = (folder / "vocab.txt").stat().st_size
        self._vocab = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._seen: dict[str, int | None] = {}  # tokens looked up (a query's recur across parts'
        # scores and matches, and across queries in one process), at most SEEN of them
        self._probed: dict[int, bytes] = {}  # the words bisection read: every lookup reads
        # the same first ones (the middle word, then a quarter's …)

    def _word(self, k: int) -> bytes:
        return self._vocab[self._starts.item(k) : self._starts.item(k + 1) - 1]

    def token_id(self, token: str) -> int | None:
        """The id of a token, or None if no document has it."""
        if token in self._seen:
            return self._seen[token]
        if len(self._seen) >= SEEN:
            self._seen.clear()
            self._probed.clear()
        found = self._seen[token] = self._lookup(token)
        return found

    def _lookup(self, token: str) -> int | None:
        """A token's id by bisection over the sorted vocabulary (about 18 probes)."""
        key = token.encode()
        lo, hi = 0, self._n
        probed = self._probed
        while lo < hi:
            mid = (lo + hi) // 2
            word = probed.get(mid)
            if word is None:
                word = probed[mid] = self._word(mid)
            if word < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self._n and self._word(lo) == key:
            return int(self._ids[lo])
        return None

    def known(self, tokens: list[str]) -> list[str]:
        """The tokens some document has."""
        return [t for t in tokens if self.token_id(t) is not None]

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for these query tokens (unknown tokens add nothing)."""
        ids = [i for i in map(self.token_id, dict.fromkeys(tokens)) if i is not None]
        if not ids:
            return np.zeros(self.num_docs, dtype=np.float32)
        spans = [(int(self.indptr[i]), int(self.indptr[i + 1])) for i in ids]
        docs = np.concatenate([self.indices[a:b] for a, b in spans])
        weights = np.concatenate([self.data[a:b] for a, b in spans])
        return np.bincount(docs, weights=weights, minlength=self.num_docs).astype(np.float32)

    def one_of_scores(self, terms: list[list[str]]) -> np.ndarray:
        """BM25 score of every document for query terms each of which any of several tokens
        says (`[["prod", "mul"], ["deriv"]]`): a term counts once in a document, with the IDF of
        the documents that have any of its tokens. Only for an index whose documents hold
        each token once (the name parts, `nameparts.document_parts`): there a token's weight
        in a document is its IDF times the document's length factor, which is recovered here."""
        out = np.zeros(self.num_docs, dtype=np.float64)
        for term in terms:
            ids = [i for i in map(self.token_id, dict.fromkeys(term)) if i is not None]
            spans = [(int(self.indptr[i]), int(self.indptr[i + 1])) for i in ids]
            spans = [(a, b) for a, b in spans if b > a]
            if not spans:
                continue
            docs = np.concatenate([self.indices[a:b] for a, b in spans])
            factor = np.concatenate(
                [np.asarray(self.data[a:b], dtype=np.float64) / self.idf(b - a) for a, b in spans]
            )
            # only the documents that have the term: a token's are distinct and ascending,
            # several tokens' are numbered by their place among the term's (`_distinct`)
            said, where = _distinct(docs) if len(spans) > 1 else (docs, None)
            count = np.bincount(where, minlength=len(said)) if where is not None else 1
            length = factor if where is None else np.bincount(where, factor, len(said))
            out[said] += self.idf(len(said)) * length / count
        return out.astype(np.float32)

    def idf(self, df: int) -> float:
        """bm25s's IDF (its default, Lucene's) of a token that `df` documents have."""
        return float(np.log(1.0 + (self.num_docs - df + 0.5) / (df + 0.5)))

    def postings(self, token: str) -> np.ndarray:
        """The positions of the documents that contain `token` (none when no document does)."""
        i = self.token_id(token)
        if i is None:
            return np.zeros(0, dtype=np.int32)
        return np.asarray(self.indices[int(self.indptr[i]) : int(self.indptr[i + 1])])

    def matched(self, tokens: list[str] | dict[str, float], positions: np.ndarray) -> np.ndarray:
        """For each document position, how many of the (distinct) tokens it contains (given
        a token → weight mapping, the sum of the weights of those it contains). A token's
        documents are in ascending order (bm25s's sparse matrix; a test checks it), so each
        position is found by bisection: `np.isin` hashed the whole posting list, a hundred
        thousand documents for `mul`, on every call."""
        positions = np.asarray(positions)
        weights = tokens if isinstance(tokens, dict) else dict.fromkeys(tokens, 1.0)
        return weighted_sum({t: self.contains(t, positions) for t in weights}, weights,
                            len(positions))  # fmt: skip

    def contains(self, token: str, positions: np.ndarray) -> np.ndarray | None:
        """Whether each document position contains `token` (None where no document does):
        what `matched` adds up, for a caller that sums several sets of the same tokens."""
        i = self.token_id(token)
        if i is None:
            return None
        docs = self.indices[int(self.indptr[i]) : int(self.indptr[i + 1])]
        if len(docs) == 0:
            return None
        at = np.minimum(np.searchsorted(docs, positions), len(docs) - 1)
        found: np.ndarray = docs[at] == positions
        return found

    def top(self, tokens: list[str], k: int) -> np.ndarray:
        """Positions of the `k` best documents with a positive score, best first."""
        return top_positions(self.scores(tokens), k)


def write_lines(stem: Path, lines: list[str]) -> None:
    """One line per document and their byte offsets (`<stem>.txt`, `<stem>.npy`)."""
    blobs = [ln.replace("\n", " ").encode() + b"\n" for ln in lines]
    stem.with_suffix(".txt").write_bytes(b"".join(blobs))
    np.save(stem.with_suffix(".npy"), np.cumsum([0] + [len(b) for b in blobs], dtype=np.int64))


class Lines:
    """A `write_lines` file opened once and memory-mapped: `lines[i]` reads line i from the
    mapped pages, so a process that shows many hits opens the two files once, not per hit."""

    def __init__(self, stem: Path):
        self._starts = mapped(stem.with_suffix(".npy"))
        with open(stem.with_suffix(".txt"), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # the map holds its own reference to the file: closing the handle leaves it valid
            self._text = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, position: int) -> str:
        a, b = int(self._starts[position]), int(self._starts[position + 1])
        return self._text[a:b].decode().rstrip("\n")

    def many(self, positions: np.ndarray) -> list[str]:
        """`[lines[p] for p in positions]`, the offsets read at once."""
        positions = np.asarray(positions, dtype=np.int64)
        starts, ends = self._starts[positions].tolist(), self._starts[positions + 1].tolist()
        text = self._text
        return [text[a:b].decode().rstrip("\n") for a, b in zip(starts, ends, strict=True)]


def weighted_sum(
    contains: dict[str, np.ndarray | None], weights: dict[str, float], n: int
) -> np.ndarray:
    """Per document, the sum of the weights of the tokens it contains (`Lexical.contains` of
    each token; None: none), added in the order of `weights` (`Lexical.matched`)."""
    out = np.zeros(n, dtype=np.float64)
    for token, weight in weights.items():
        found = contains[token]
        if found is not None:
            out += weight * found
    return out


def total(terms: Iterable[np.ndarray]) -> np.ndarray:
    """`sum(terms)` (0 and each in turn), added in place into one new array."""
    out: np.ndarray | None = None
    for term in terms:
        if out is None:
            out = term + 0  # what `sum` adds first (a new array: -0.0 becomes 0.0)
        else:
            out += term
    return np.zeros(0) if out is None else out


def _distinct(docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `docs`, ascending, and each element's index among them."""
    order = np.argsort(docs, kind="stable")
    ordered = docs[order]
    first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    where = np.empty(len(docs), dtype=np.intp)
    where[order] = np.cumsum(first) - 1
    return ordered[first], where


def top_positions(score: np.ndarray, k: int) -> np.ndarray:
    """Positions of the `k` highest positive scores, best first (ties by position)."""
    positive = np.flatnonzero(score > 0)  # most of a part's scores are 0: partition the rest
    k = min(k, len(positive))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    top = positive[np.argpartition(-score[positive], k - 1)[:k]] if k < len(positive) else positive
    out: np.ndarray = top[np.lexsort((top, -score[top]))]
    return out
