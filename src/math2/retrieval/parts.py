"""Writing an index's lexical parts (`build.py` decides which): the BM25 part over each
declaration's words (index text v1's `doc_text`, or `text.document_text` with stored notation),
what definitions say (`body/`), adjacent-word phrases (`phrase/`), formula shapes (`shape/`)
and the search aids (`aids/`, `parents/`). Each part is one `lexical.build` over one list of
tokenised documents in index order; every stage is counted for the build's progress lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from math2.lean.syntax import split_identifier
from math2.retrieval import lexical
from math2.retrieval.shape import definition_shape_tokens, shape_tokens
from math2.retrieval.text import (
    constant_words,
    document_phrases,
    document_text,
    tokens,
    v1_tokens,
)
from math2.util.progress import heartbeat, stage, track

if TYPE_CHECKING:
    from math2.retrieval.corpus import Row
    from math2.retrieval.notation import NotationTable

T = TypeVar("T")
BATCH = 1000  # declarations between two counts of a stage (a count per item costs more)


def name_words(name: str) -> str:
    """`Nat.Prime.two_le` -> `Nat Prime two le` (index text v1: `split_identifier`, case kept,
    capital runs not split)."""
    return " ".join(split_identifier(name, lower=False, acronyms=False))


def doc_text(name: str, statement: str | None, docstring: str | None) -> str:
    """What is indexed for one declaration (index text v1)."""
    return " ".join(x for x in (name_words(name), statement or "", docstring or "") if x)


class Tokenizer:
    """The index text's tokenizer (`stemmed` v4+, `folded` v6+) with the stored notation's
    words added to a statement's where the build reads notation (v9)."""

    def __init__(self, stemmed: bool, folded: bool, notation: NotationTable | None):
        self.stemmed, self.folded, self.notation = stemmed, folded, notation

    def __call__(self, text: str) -> list[str]:
        return tokens(text, self.stemmed, self.folded)

    def words(self, r: Row, docstring: str | None) -> list[str]:
        """A declaration's words: name, statement, docstring, module (and notation's words)."""
        toks = self(document_text(r.name, r.statement, docstring, r.module))
        if self.notation is not None and r.statement:
            toks += self.notation.tokens(r.statement, self)
        return toks

    def body(self, body: list[str]) -> list[str]:
        """What a definition says, with its constants' words."""
        said = " ; ".join(body)
        toks = self(f"{said} {constant_words(said)}")
        if self.notation is not None:
            toks += self.notation.tokens(said, self)
        return toks

    def phrases(self, r: Row, docstring: str | None) -> list[str]:
        return document_phrases(r.name, docstring, self.stemmed, self.folded)


def build_words(
    rows: list[Row], docs: list[str | None], out: Path, tag: str, text_version: int,
    tok: Tokenizer,
) -> None:  # fmt: skip
    """The words part (`bm25/`): index text v1's text and tokenizer, else `Tokenizer.words`."""
    pairs = list(zip(rows, docs, strict=True))
    if text_version == 1:
        texts = [doc_text(r.name, r.statement, d) for r, d in each(pairs, f"{tag}: words")]
        bm25(v1_tokens(texts), out / "bm25", f"{tag}: BM25 over words")
    else:
        words = [tok.words(r, d) for r, d in each(pairs, f"{tag}: words")]
        bm25(words, out / "bm25", f"{tag}: BM25 over words")


def build_phrases(rows: list[Row], docs: list[str | None], out: Path, tag: str,
                  tok: Tokenizer) -> None:  # fmt: skip
    """Adjacent words of the name and docstring (`phrase/`, v3+)."""
    pairs = list(zip(rows, docs, strict=True))
    phrases = [tok.phrases(r, d) for r, d in each(pairs, f"{tag}: phrases")]
    bm25(phrases, out / "phrase", f"{tag}: BM25 over phrases")


def build_by_position(texts: dict[int, str], n: int, folder: Path, name: str,
                      tok: Tokenizer) -> None:  # fmt: skip
    """A prose part with one document per declaration (empty where `texts` has none)."""
    clear(folder)
    if texts:
        bm25([tok(texts.get(i, "")) for i in range(n)], folder, name)


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
    clear(out / "shape")
    grams = [shape_tokens(st) for st in each(statements, f"{tag}: shapes")]
    for i, body in enumerate(bodies or []):
        if body:
            grams[i] += definition_shape_tokens(statements[i], body, kinds[i] if kinds else None)
    bm25(grams, out / "shape", f"{tag}: BM25 over formula shapes")


def each(items: list[T], name: str) -> Iterator[T]:
    """`items` counted as a stage of declarations."""
    return track(items, name, unit="declarations", batch=BATCH)


def bm25(docs: list[list[str]], folder: Path, name: str) -> None:
    """bm25s over tokenised documents, a stage that counts nothing inside: a line on time."""
    with stage(name) as st, heartbeat(st):
        st.update(note=f"{len(docs)} documents")
        lexical.build(docs, folder)


def clear(folder: Path) -> None:
    """Remove a part's files (a part this build does not write must not outlive it)."""
    for f in folder.glob("*") if folder.exists() else []:
        f.unlink()
