"""Word n-gram overlap: the engine of the copy check (K9.4) and of 13-gram decontamination.

Tokenisation follows the convention of the lm-evaluation-harness decontamination step (the one
the GPT-3 paper used): ASCII letters are lower-cased, ASCII punctuation is deleted (so "x^2+1,"
becomes "x21"), and the result is split on whitespace (Python's `str.split()`, so Unicode
whitespace counts). Non-ASCII characters are kept as they are. An n-gram is n consecutive tokens.

Each token is hashed to 64 bits (BLAKE2b, so hashes are stable across processes and machines)
and an n-gram's hash is a polynomial of its token hashes modulo 2**64, computed with numpy over
the whole text at once. A reference corpus is indexed as sorted arrays of distinct n-gram hashes
with, for each, the number of the first reference document that holds it; an index is a folder
of such shards, so a corpus larger than memory (OpenWebMath) is indexed shard by shard and
queried with memory-mapped arrays.

The engine never returns reference text: a match names the reference document by its id and
the matched region by character offsets into the text that was queried. Nothing of a reference
(PutnamBench, whose statements math2 may not copy anywhere) can reach an output through it.

    index = NgramIndex.build([("doc-1", text1), ("doc-2", text2)], n=13)
    report = index.overlap(candidate)      # spans, matched n-grams, the documents they came from
    index.hits(candidate)                  # fast path: how many of its n-grams are in the index
    index.save(folder); NgramIndex.load(folder)
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from math2.errors import InputError
from math2.util.jsonl import read_jsonl

__all__ = [
    "DEFAULT_N",
    "TOKENIZER",
    "NgramIndex",
    "NgramIndexError",
    "Overlap",
    "Span",
    "iter_jsonl_texts",
    "ngram_hashes",
    "normalize",
    "token_spans",
    "tokens",
]

DEFAULT_N = 13
TOKENIZER = "lm-eval-harness: ascii lower, delete ascii punctuation, split on whitespace"
_FORMAT = 1
_TABLE = str.maketrans(string.ascii_uppercase, string.ascii_lowercase, string.punctuation)
_WORD = re.compile(r"\S+")
_MUL = np.uint64(0x100000001B3)  # an odd 64-bit multiplier (the FNV prime)
_CACHE_LIMIT = 2_000_000


def normalize(text: str) -> str:
    """The text as the tokenizer sees it (ASCII lower-cased, ASCII punctuation deleted)."""
    return text.translate(_TABLE)


def tokens(text: str) -> list[str]:
    """The tokens of a text (see the module docstring)."""
    return text.translate(_TABLE).split()


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets in `text` of each token of `tokens(text)`, in order."""
    out = []
    for m in _WORD.finditer(text):
        if m.group().translate(_TABLE):
            out.append(m.span())
    return out


class _TokenHasher:
    """Stable 64-bit token hashes, cached (most of a text's tokens are frequent words)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def __call__(self, toks: list[str]) -> np.ndarray:
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        for t in set(toks).difference(cache):
            cache[t] = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
        get = cache.__getitem__
        return np.fromiter(map(get, toks), dtype=np.uint64, count=len(toks))


_hash_tokens = _TokenHasher()


def ngram_hashes(toks: list[str], n: int = DEFAULT_N) -> np.ndarray:
    """The hash of each n-gram of `toks`, in order (empty when there are fewer than n tokens)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    m = len(toks) - n + 1
    if m <= 0:
        return np.empty(0, dtype=np.uint64)
    ids = _hash_tokens(toks)
    h = ids[:m].copy()
    with np.errstate(over="ignore"):
        for k in range(1, n):
            h *= _MUL
            h += ids[k : k + m]
    return h


@dataclass(frozen=True, slots=True)
class Span:
    """A run of consecutive matched n-grams, as character offsets into the queried text."""

    start: int
    end: int
    ngrams: int  # how many matched n-grams the run holds
    docs: tuple[str, ...]  # the reference documents its n-grams were first seen in


@dataclass(frozen=True, slots=True)
class Overlap:
    """How much of a text's n-grams an index holds, and where."""

    n: int
    ngrams: int  # n-grams in the text
    matched: int  # of those, how many the index holds
    spans: tuple[Span, ...] = field(default=())

    @property
    def fraction(self) -> float:
        return self.matched / self.ngrams if self.ngrams else 0.0

    @property
    def matched_chars(self) -> int:
        return sum(s.end - s.start for s in self.spans)

    def to_dict(self) -> dict:
        """A JSON-ready view (offsets and document ids only, never reference text)."""
        return {
            "n": self.n,
            "ngrams": self.ngrams,
            "matched": self.matched,
            "fraction": round(self.fraction, 6),
            "spans": [
                {"start": s.start, "end": s.end, "ngrams": s.ngrams, "docs": list(s.docs)}
                for s in self.spans
            ],
        }


class NgramIndexError(ValueError):
    """An index folder that cannot be read (missing, wrong format, other tokenizer)."""


class NgramIndex:
    """Distinct n-gram hashes of reference documents, in sorted shards, with their documents."""

    def __init__(self, n: int = DEFAULT_N, *, shard_ngrams: int = 50_000_000) -> None:
        if n < 1:
            raise ValueError(f"n must be at least 1, not {n}")
        self.n = n
        self.shard_ngrams = shard_ngrams
        self.doc_ids: list[str] = []
        self._shards: list[tuple[np.ndarray, np.ndarray]] = []  # (sorted hashes, doc numbers)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    # building ---------------------------------------------------------------------------
    @classmethod
    def build(cls, docs: Iterable[tuple[str, str]], n: int = DEFAULT_N, **kw: int) -> NgramIndex:
        """An index of (document id, text) pairs."""
        index = cls(n, **kw)
        for doc_id, text in docs:
            index.add(doc_id, text)
        index.freeze()
        return index

    def add(self, doc_id: str, text: str) -> None:
        """Add one reference document (call `freeze` before querying)."""
        h = ngram_hashes(tokens(text), self.n)
        number = len(self.doc_ids)
        self.doc_ids.append(doc_id)
        if not len(h):
            return
        self._pending.append((h, np.full(len(h), number, dtype=np.uint32)))
        self._pending_size += len(h)
        if self._pending_size >= self.shard_ngrams:
            self._flush()

    def freeze(self) -> NgramIndex:
        """Sort what was added into a shard."""
        self._flush()
        return self

    def _flush(self) -> None:
        if not self._pending:
            return
        h = np.concatenate([p[0] for p in self._pending])
        d = np.concatenate([p[1] for p in self._pending])
        self._pending, self._pending_size = [], 0
        uniq, first = np.unique(h, return_index=True)  # first occurrence: the earliest document
        self._shards.append((uniq, d[first]))

    @property
    def size(self) -> int:
        """Distinct n-grams over all shards (an n-gram in two shards counts twice)."""
        return sum(len(s[0]) for s in self._shards)

    # querying ---------------------------------------------------------------------------
    def _lookup(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(hit mask, document number or -1) for each hash."""
        hit = np.zeros(len(h), dtype=bool)
        doc = np.full(len(h), -1, dtype=np.int64)
        if not len(h):
            return hit, doc
        for hashes, docs in self._shards:
            if not len(hashes):
                continue
            pos = np.searchsorted(hashes, h)
            pos[pos == len(hashes)] = 0
            found = (hashes[pos] == h) & ~hit
            doc[found] = docs[pos[found]]
            hit |= found
        return hit, doc

    def hits(self, text: str) -> int:
        """How many of the text's n-grams (with repeats) the index holds."""
        h = ngram_hashes(tokens(text), self.n)
        return int(self._lookup(h)[0].sum())

    def contains_any(self, text: str) -> bool:
        """Whether any n-gram of the text is in the index (the decontamination test)."""
        return self.hits(text) > 0

    def overlap(self, text: str) -> Overlap:
        """Matched n-grams of a text, merged into character spans, with their documents."""
        toks = tokens(text)
        h = ngram_hashes(toks, self.n)
        hit, doc = self._lookup(h)
        matched = int(hit.sum())
        if not matched:
            return Overlap(self.n, len(h), 0)
        offsets = token_spans(text)
        spans: list[Span] = []
        idx = np.flatnonzero(hit)
        # runs of n-grams whose windows touch or overlap: gram i covers tokens i .. i+n-1
        start = prev = int(idx[0])
        for i in [*(int(x) for x in idx[1:]), None]:
            if i is not None and i <= prev + self.n:
                prev = i
                continue
            grams = [g for g in range(start, prev + 1) if hit[g]]
            names = sorted({self.doc_ids[int(doc[g])] for g in grams})
            spans.append(
                Span(offsets[start][0], offsets[prev + self.n - 1][1], len(grams), tuple(names))
            )
            if i is not None:
                start = prev = i
        return Overlap(self.n, len(h), matched, tuple(spans))

    # persistence ------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write the index as a folder: meta.json, and hashes/docs .npy files per shard."""
        self.freeze()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for k, (hashes, docs) in enumerate(self._shards):
            np.save(folder / f"shard-{k:05d}.hashes.npy", hashes)
            np.save(folder / f"shard-{k:05d}.docs.npy", docs)
        meta = {
            "format": _FORMAT,
            "tokenizer": TOKENIZER,
            "n": self.n,
            "shards": len(self._shards),
            "ngrams": self.size,
            "doc_ids": self.doc_ids,
        }
        tmp = folder / "meta.json.tmp"
        tmp.write_text(json.dumps(meta), encoding="utf-8")
        tmp.replace(folder / "meta.json")  # the index exists once its meta does
        return folder

    @classmethod
    def load(cls, folder: str | Path, *, mmap: bool = True) -> NgramIndex:
        """Read an index folder (memory-mapped by default)."""
        folder = Path(folder)
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NgramIndexError(f"{folder}: not an n-gram index (no meta.json)") from None
        except (OSError, ValueError) as e:
            raise NgramIndexError(f"{folder}/meta.json: unreadable ({e})") from None
        if meta.get("format") != _FORMAT or meta.get("tokenizer") != TOKENIZER:
            raise NgramIndexError(f"{folder}: index of another format or tokenizer")
        index = cls(int(meta["n"]))
        index.doc_ids = list(meta["doc_ids"])
        mode = "r" if mmap else None
        for k in range(int(meta["shards"])):
            try:
                hashes = np.load(folder / f"shard-{k:05d}.hashes.npy", mmap_mode=mode)
                docs = np.load(folder / f"shard-{k:05d}.docs.npy", mmap_mode=mode)
            except (OSError, ValueError) as e:
                raise NgramIndexError(f"{folder}: shard {k} unreadable ({e})") from None
            if len(hashes) != len(docs):
                raise NgramIndexError(f"{folder}: shard {k} is truncated")
            index._shards.append((hashes, docs))
        return index


def iter_jsonl_texts(path: str | Path, field_name: str = "text") -> Iterator[tuple[str, str]]:
    """(path:line, text) for each line of a JSONL reference file (for building an index)."""
    path = Path(path)
    lines = read_jsonl(path)  # not UTF-8, not JSON, no object, over the text limit: file:line
    while True:
        try:
            lineno, rec = next(lines)
        except StopIteration:
            return
        except InputError as exc:
            raise NgramIndexError(str(exc)) from None
        text = rec.get(field_name)
        if not isinstance(text, str):
            raise NgramIndexError(f"{path}:{lineno}: no string field {field_name!r}")
        yield f"{path.name}:{lineno}", text
