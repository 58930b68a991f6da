"""What a hit shows without opening the store: each declaration's kind, module, the first
line of its docstring and, for a deprecated declaration, since when and its successor (as the
source writes it), kept beside the index as one tab-separated line per document
(`cards.txt`, offsets in `cards.npy`; `lexical.write_lines`), read through one memory map.

`math2 search` prints them under each hit, and `--json` gives them to scripts (issue 45 §5);
an index built before them has none (`Card` with empty fields), never an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from math2.retrieval import lexical
from math2.util.construct import construct

STEM = "cards"


class Card(BaseModel):
    """One declaration as a hit shows it."""

    kind: str | None = None
    module: str | None = None
    doc: str | None = None  # the docstring's first line
    deprecated: str | None = None  # since when (a date or version; `unknown` when not said)
    successor: str | None = None  # what a deprecated declaration says to use instead


def first_line(docstring: str | None) -> str:
    """The docstring's first non-empty line, without tabs (the file's separator)."""
    for line in (docstring or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def write(folder: Path, kinds: list[str | None], modules: list[str | None],
          docs: list[str | None], extras: list[dict[str, Any]]) -> None:  # fmt: skip
    """One card per document, in the index's order (`extras`: `Mention.extra`, whose
    `deprecated_since` and `successor` the importer records)."""
    lines = [
        "\t".join((k or "", m or "", first_line(d), _field(e.get("deprecated_since")),
                   _field(e.get("successor") if e.get("deprecated_since") else None)))
        for k, m, d, e in zip(kinds, modules, docs, extras, strict=True)
    ]  # fmt: skip
    lexical.write_lines(folder / STEM, lines)


def _field(value: object) -> str:
    return " ".join(str(value).split()) if value else ""


class Cards:
    """The cards of a built index (an older index without them gives empty cards)."""

    def __init__(self, folder: Path):
        stem = folder / STEM
        self._lines = lexical.Lines(stem) if stem.with_suffix(".txt").exists() else None

    def kinds(self, positions: list[int]) -> list[str | None]:
        """The cards' kinds alone (the learned ranker reads those of every candidate)."""
        if self._lines is None:
            return [None] * len(positions)
        lines = self._lines.many(np.asarray(positions, dtype=np.int64))
        # a negative position has no card (as `cards[p]`), whatever `many` reads for it
        return [
            line.split("\t", 1)[0] or None if p >= 0 else None
            for p, line in zip(positions, lines, strict=True)
        ]

    def __getitem__(self, position: int) -> Card:
        if self._lines is None or position < 0:
            return Card()
        return _card(self._lines[position])

    def many(self, positions: list[int]) -> list[Card]:
        """`[cards[p] for p in positions]` (positions of the index), the offsets read at once."""
        if self._lines is None:
            return [Card() for _ in positions]
        lines = self._lines.many(np.asarray([max(p, 0) for p in positions], dtype=np.int64))
        return [_card(line) if p >= 0 else Card() for p, line in zip(positions, lines, strict=True)]


def _card(line: str) -> Card:
    kind, module, doc, since, successor = [*line.split("\t"), *[""] * 4][:5]
    # unvalidated: the index wrote these strings (`util.construct`, as the hits are built)
    return construct(Card, {
        "kind": kind or None, "module": module or None, "doc": doc or None,
        "deprecated": since or None, "successor": successor or None,
    })  # fmt: skip
