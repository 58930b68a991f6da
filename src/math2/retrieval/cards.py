"""What a hit shows without opening the store: each declaration's kind, module and the first
line of its docstring, kept beside the index as one tab-separated line per document
(`cards.txt`, offsets in `cards.npy`; `lexical.write_lines`), read through one memory map.

`math2 search` prints them under each hit, and `--json` gives them to scripts (issue 45 §5);
an index built before them has none (`Card` with empty fields), never an error.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from math2.retrieval import lexical

STEM = "cards"


class Card(BaseModel):
    """One declaration as a hit shows it."""

    kind: str | None = None
    module: str | None = None
    doc: str | None = None  # the docstring's first line


def first_line(docstring: str | None) -> str:
    """The docstring's first non-empty line, without tabs (the file's separator)."""
    for line in (docstring or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def write(folder: Path, kinds: list[str | None], modules: list[str | None],
          docs: list[str | None]) -> None:  # fmt: skip
    """One card per document, in the index's order."""
    lines = [
        f"{k or ''}\t{m or ''}\t{first_line(d)}"
        for k, m, d in zip(kinds, modules, docs, strict=True)
    ]
    lexical.write_lines(folder / STEM, lines)


class Cards:
    """The cards of a built index (an older index without them gives empty cards)."""

    def __init__(self, folder: Path):
        stem = folder / STEM
        self._lines = lexical.Lines(stem) if stem.with_suffix(".txt").exists() else None

    def __getitem__(self, position: int) -> Card:
        if self._lines is None or position < 0:
            return Card()
        kind, module, doc = [*self._lines[position].split("\t"), "", ""][:3]
        return Card.model_construct(kind=kind or None, module=module or None, doc=doc or None)
