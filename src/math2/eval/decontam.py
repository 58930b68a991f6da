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

from collections import Counter
from collections.abc import Iterable, Iterator
from enum import StrEnum

import numpy as np
from pydantic import BaseModel

from math2.checks.ngrams import DEFAULT_N, TOKENIZER, NgramIndex, ngram_hashes, tokens
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


class Decontaminator:
    """An index over every benchmark text of a registry."""

    def __init__(self, registry: Registry, n: int = DEFAULT_N) -> None:
        self.n = n
        self.registry = registry
        self._doc_bench: list[str] = []
        self._exact: dict[str, str] = {}
        short: dict[int, dict[int, str]] = {}
        docs = []
        for v in registry:
            key = f"{v.label} ({v.short_hash})"
            for it in v.items:
                for text in (it.informal, it.formal):
                    toks = tokens(text)
                    if len(toks) < MIN_SHORT:
                        self._exact.setdefault(item_fingerprint(text), key)
                    elif len(toks) < n:
                        h = int(ngram_hashes(toks, len(toks))[0])
                        short.setdefault(len(toks), {}).setdefault(h, key)
                    docs.append((str(len(self._doc_bench)), text))
                    self._doc_bench.append(key)
        self._short = {m: (np.array(sorted(d), dtype=np.uint64), d) for m, d in short.items()}
        self.index = NgramIndex.build(docs, n=n)

    def hit(self, text: str) -> str | None:
        """The benchmark (`label (hash)`) a text overlaps, or None."""
        toks = tokens(text)
        if len(toks) < MIN_SHORT and (key := self._exact.get(item_fingerprint(text))):
            return key
        for m, (arr, keys) in self._short.items():
            if len(toks) >= m:
                h = ngram_hashes(toks, m)
                found = h[np.isin(h, arr)]
                if found.size:
                    return keys[int(found[0])]
        if len(toks) < self.n or not self.index.contains_any(text):
            return None
        docs = sorted({int(d) for sp in self.index.overlap(text).spans for d in sp.docs})
        return self._doc_bench[docs[0]]

    def run(
        self, records: Iterable[dict], fields: Iterable[str], mode: Mode = Mode.DROP
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
            for rec in records:
                rep.records += 1
                found = None
                for f in fields:
                    val = rec.get(f)
                    if isinstance(val, str) and (found := self.hit(val)):
                        break
                if found:
                    rep.contaminated += 1
                    counts[found] += 1
                    rep.by_benchmark = dict(counts)
                    if mode is Mode.DROP:
                        continue
                    rec = {**rec, "contaminated_by": found}
                yield rec

        return gen(), rep
