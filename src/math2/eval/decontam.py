"""13-gram decontamination of any dataset against every registered benchmark.

The n-gram engine is `math2.checks.ngrams` (the copy check's engine; tokenisation is the
lm-evaluation-harness one: ASCII lower-case, ASCII punctuation deleted, split on whitespace).
Every benchmark item's informal and formal statement is indexed; a dataset record is
contaminated when any of its text fields shares at least one n-gram (default 13) with a
benchmark text. A benchmark text shorter than n tokens (a 13-gram test cannot see a 9-word
problem) counts as one m-gram of its own length m: a record holding its whole token sequence
is contaminated; below `MIN_SHORT` tokens only a record equal to it (after normalisation) is.
Contaminated records are dropped or flagged; the counts (per benchmark version, by hash) go
into the report and the dataset card.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

import numpy as np
from pydantic import BaseModel

from math2.checks.ngrams import _MUL, DEFAULT_N, TOKENIZER, ngram_hashes, tokens
from math2.eval.benchmarks import Registry, item_fingerprint

__all__ = ["MIN_SHORT", "DecontamReport", "Decontaminator", "Mode"]

MIN_SHORT = 5


class Mode(StrEnum):
    DROP = "drop"
    FLAG = "flag"


class DecontamReport(BaseModel):
    """What a pass found: counts overall and per benchmark version."""

    n: int
    tokenizer: str = TOKENIZER
    mode: Mode
    fields: list[str]
    records: int = 0
    contaminated: int = 0
    by_benchmark: dict[str, int] = {}  # "label (hash12)" -> records hit
    benchmarks: dict[str, str] = {}  # label -> full version hash


def _batches(it: Iterable[dict], size: int) -> Iterator[list[dict]]:
    it = iter(it)
    while batch := list(itertools.islice(it, size)):
        yield batch


class Decontaminator:
    """Tables of benchmark n-gram hashes (the checks engine's hashes), queried in batches.

    For each length m from `MIN_SHORT` to n there is one sorted array of hashes: for m = n every
    n-gram of every benchmark text of at least n tokens, for m < n the whole of each benchmark
    text of exactly m tokens. A batch of texts is tokenised and hashed once; the hashes of
    all m-grams are grown one token at a time (the engine's polynomial hash, so they equal
    `ngram_hashes(tokens, m)`) and looked up with one binary search per length.
    """

    def __init__(self, registry: Registry, n: int = DEFAULT_N) -> None:
        if n < MIN_SHORT:
            raise ValueError(f"n must be at least {MIN_SHORT}")
        self.n = n
        self.registry = registry
        self._keys: list[str] = []
        self._exact: dict[str, int] = {}
        grams: dict[int, list[np.ndarray]] = {}
        owners: dict[int, list[np.ndarray]] = {}
        for v in registry:
            self._keys.append(f"{v.label} ({v.short_hash})")
            b = len(self._keys) - 1
            for it in v.items:
                for text in (it.informal, it.formal):
                    toks = tokens(text)
                    if len(toks) < MIN_SHORT:
                        self._exact.setdefault(item_fingerprint(text), b)
                        continue
                    m = min(len(toks), n)
                    h = ngram_hashes(toks, m)
                    grams.setdefault(m, []).append(h)
                    owners.setdefault(m, []).append(np.full(len(h), b, dtype=np.int32))
        self._tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for m in grams:
            h = np.concatenate(grams[m])
            o = np.concatenate(owners[m])
            order = np.argsort(h, kind="stable")
            self._tables[m] = (h[order], o[order])

    def hits(self, texts: Sequence[str]) -> list[str | None]:
        """For each text, the benchmark (`label (hash12)`) it overlaps, or None."""
        out: list[str | None] = [None] * len(texts)
        toks = [tokens(t) for t in texts]
        for i, (t, tk) in enumerate(zip(texts, toks, strict=True)):
            if len(tk) < MIN_SHORT and (b := self._exact.get(item_fingerprint(t))) is not None:
                out[i] = self._keys[b]
        lengths = np.array([len(tk) for tk in toks], dtype=np.int64)
        total = int(lengths.sum())
        if total == 0 or not self._tables:
            return out
        flat = [w for tk in toks for w in tk]
        ids = ngram_hashes(flat, 1)
        owner = np.repeat(np.arange(len(texts)), lengths)
        end = np.repeat(np.cumsum(lengths), lengths)  # one past each position's last token
        pos = np.arange(total)
        h = ids.copy()
        best = np.full(len(texts), -1, dtype=np.int64)
        with np.errstate(over="ignore"):
            for m in range(1, self.n + 1):
                if m > 1:
                    h = h[:-1] * _MUL + ids[m - 1 :]
                if m not in self._tables:
                    continue
                valid = pos[: len(h)] + m <= end[: len(h)]
                cand = h[valid]
                table, own = self._tables[m]
                at = np.searchsorted(table, cand)
                at[at == len(table)] = 0
                found = table[at] == cand
                if found.any():
                    rows = owner[: len(h)][valid][found]
                    bench = own[at[found]]
                    unset = best[rows] < 0
                    best[rows[unset]] = bench[unset]
        for i in np.flatnonzero(best >= 0):
            if out[i] is None:
                out[i] = self._keys[int(best[i])]
        return out

    def hit(self, text: str) -> str | None:
        """The benchmark (`label (hash12)`) a text overlaps, or None."""
        return self.hits([text])[0]

    def run(
        self,
        records: Iterable[dict],
        fields: Iterable[str],
        mode: Mode = Mode.DROP,
        batch_size: int = 4096,
    ) -> tuple[Iterator[dict], DecontamReport]:
        """Stream records through; `report` is complete once the iterator is exhausted."""
        fields = list(fields)
        rep = DecontamReport(
            n=self.n,
            mode=mode,
            fields=fields,
            benchmarks={v.label: v.version_hash for v in self.registry},
        )
        counts: Counter[str] = Counter()

        def gen() -> Iterator[dict]:
            for batch in _batches(records, batch_size):
                texts = []
                where = []
                for i, rec in enumerate(batch):
                    for f in fields:
                        val = rec.get(f)
                        if isinstance(val, str):
                            texts.append(val)
                            where.append(i)
                found_by = [None] * len(batch)
                for i, key in zip(where, self.hits(texts), strict=True):
                    if key is not None and found_by[i] is None:
                        found_by[i] = key
                yield from self._emit(batch, found_by, rep, counts, mode)

        return gen(), rep

    @staticmethod
    def _emit(batch, found_by, rep, counts, mode):
        for rec, found in zip(batch, found_by, strict=True):
            rep.records += 1
            if found:
                rep.contaminated += 1
                counts[found] += 1
                rep.by_benchmark = dict(counts)
                if mode is Mode.DROP:
                    continue
                rec = {**rec, "contaminated_by": found}
            yield rec
