"""Issue 33's levers in an index: building their parts, and what a query reads of them.

Document side (index text v9, each lever a build can leave out: `text.LEVERS`):
- `body`: what a definition says (`importers.lean_bodies`, stored by the import in the
  mention's `extra["body"]`), indexed as words and formula shapes (never node text);
- `notation`: the library's notation table (`notation.py`), from the notation commands the
  import stored (else read from the checkout): a symbol's constants become tokens of documents
  and queries;
- `names`: name keys (`names/`, a lookup part), each declaration's kind (`kinds.npy`) and
  name depth (`depth.npy`) for the namesake prior, and the rename table (`renames.npy`);
- `vocabulary`: the phrase → name-word table mined from the library's prose (`vocabulary.py`).

Query side (`QueryLevers`, one per open index, each part read on first use): the notation
tokens of a query, its vocabulary words, its namesakes, and the successor of a renamed hit.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from math2.retrieval import lexical
from math2.retrieval.latex import notion_constants, to_lean
from math2.retrieval.nameparts import (
    FAMILIES,
    document_parts,
    gloss,
    glossed,
    query_terms,
)
from math2.retrieval.names import (
    CONCEPT,
    kind_codes,
    name_keys,
    query_keys,
    query_words,
    renames,
)
from math2.retrieval.notation import (
    Declared,
    NotationTable,
    latex_notation,
    read_table,
    table_of,
)
from math2.retrieval.text import STOPWORDS, prose_tokens, tokens
from math2.retrieval.vocabulary import Vocabulary, mine, module_docstrings

MAX_NAMESAKES = 5  # the namesakes fused into a ranking, best first
MAX_POSTINGS = 400  # a key more common than this names nothing in particular (`comm`)
MIN_COVER = 0.5  # "fundamental theorem of algebra" does not name `FundamentalGroup.fundamental`
_WEAK_KEYS = STOPWORDS | {"of", "is", "has", "to"}


def _variable(word: str) -> bool:
    """A one-letter Latin or Greek word, or a sub/superscript letter: a formula's variable
    (`G →* H`, `X ≃ₜ Y`), not a word a name covers; `ℝ`, `ℂ` are words."""
    if len(word) != 1:
        return False
    return word.isascii() or unicodedata.category(word) == "Lm" or "GREEK" in unicodedata.name(
        word, "")  # fmt: skip


def _formula(query: str) -> bool:
    """Whether the query writes a formula: a `:` or a mathematical symbol (`→*`, `≃ₜ`, `↪`,
    `=`, `+`; not `^` or `_`, which join `L^p`, `H^1`, `ℓ_p` into the names of concepts)."""
    return ":" in query or "*" in query or any(
        unicodedata.category(ch) in ("Sm", "So") for ch in query)  # fmt: skip


def build_levers(
    out: Path,
    names: list[str],
    kinds: list[str | None],
    successors: dict[int, str],
    docstrings: list[str | None],
    mathlib_dir: Path | None,
    levers: frozenset[str],
    say: Callable[[str], None],
    tag: str = "index",
    declared: Sequence[Declared] | None = None,
) -> tuple[NotationTable | None, dict[str, Any]]:
    """Write the lever parts asked for under `out`; (the notation table, what to record in
    `meta.json`). `successors`: position → the successor a deprecated declaration names.
    `declared`: the library's notation commands as its import stored them (None: read them
    from `mathlib_dir`)."""
    from math2.util.progress import stage

    meta: dict[str, Any] = {"levers": sorted(levers)}
    for file in (
        "kinds.npy",
        "depth.npy",
        "renames.npy",
        "notation.json",
        "notation_scoped.json",
        "vocabulary.json",
    ):
        (out / file).unlink(missing_ok=True)
    for part in ("names", "parts", "glosses"):
        for old in (out / part).glob("*") if (out / part).exists() else []:
            old.unlink()
    table = None
    if "notation" in levers and declared is not None:
        with stage(f"{tag}: notation commands (read by the import)"):
            table = table_of(declared, names)
    elif "notation" in levers and mathlib_dir is not None and mathlib_dir.is_dir():
        table = read_table(mathlib_dir, names, label=f"{tag}: notation commands")
    if table is not None:
        table.save(out)
        meta["notation"] = len(table.symbols)
        say(f"notation: {len(table.symbols)} symbols read from the library")
    if "names" in levers:
        with stage(f"{tag}: name keys"):
            lexical.build([name_keys(n) for n in names], out / "names")
        with stage(f"{tag}: name parts and concepts' glosses"):
            # uncached: 280k names once would only flush the queries' cache
            lexical.build([list(document_parts.__wrapped__(n)) for n in names], out / "parts")
            lexical.build(
                [tokens(gloss(d), True, True) if glossed(n, k) else [] for n, k, d in
                 zip(names, kinds, docstrings, strict=True)],
                out / "glosses",
            )  # fmt: skip
        np.save(out / "kinds.npy", kind_codes(kinds))
        np.save(out / "depth.npy", np.array([n.count(".") for n in names], dtype=np.uint8))
        moved = renames(names, successors)
        np.save(out / "renames.npy", moved)
        meta["renames"] = int((moved >= 0).sum())
        say(f"names: keys of {len(names)} declarations, {meta['renames']} renamed to a successor")
    if "vocabulary" in levers:
        with stage(f"{tag}: vocabulary from the library's prose"):
            docs = module_docstrings(mathlib_dir) if mathlib_dir and mathlib_dir.is_dir() else []
            vocab = Vocabulary(mine(names, docstrings, docs))
        vocab.save(out)
        meta["vocabulary"] = len(vocab.table)
        say(f"vocabulary: {len(vocab.table)} phrases mined from docstrings")
    return table, meta


class QueryLevers:
    """What a query reads of one index's lever parts (absent parts read as nothing)."""

    def __init__(self, folder: Path):
        self.folder = folder

    @cached_property
    def notation(self) -> NotationTable | None:
        return NotationTable.load(self.folder)

    @cached_property
    def vocabulary(self) -> Vocabulary | None:
        return Vocabulary.load(self.folder)

    @cached_property
    def keys(self) -> lexical.Lexical | None:
        folder = self.folder / "names"
        return lexical.Lexical(folder) if lexical.exists(folder) else None

    @cached_property
    def parts(self) -> lexical.Lexical | None:
        folder = self.folder / "parts"
        return lexical.Lexical(folder) if lexical.exists(folder) else None

    @cached_property
    def glosses(self) -> lexical.Lexical | None:
        folder = self.folder / "glosses"
        return lexical.Lexical(folder) if lexical.exists(folder) else None

    def score_parts(self, query: str, families: frozenset[str] = FAMILIES) -> np.ndarray | None:
        """Every declaration's BM25 score over its name words for the words the query asks
        for (`nameparts.query_terms`: one rule's alternative words one term); None where the
        query asks for none."""
        if self.parts is None:
            return None
        terms = query_terms(query, self.vocabulary_weights, families)
        return self.parts.one_of_scores(terms) if terms else None

    def score_glosses(self, query: str) -> np.ndarray | None:
        """Every concept's BM25 score over its own first line for the query's prose."""
        words = prose_tokens(query, True, True)[0] if self.glosses is not None else []
        return self.glosses.scores(words) if words and self.glosses is not None else None

    @cached_property
    def kinds(self) -> np.ndarray:
        return lexical.mapped(self.folder / "kinds.npy")

    @cached_property
    def depth(self) -> np.ndarray:
        return lexical.mapped(self.folder / "depth.npy")

    @cached_property
    def renames(self) -> np.ndarray | None:
        path = self.folder / "renames.npy"
        return lexical.mapped(path) if path.exists() else None

    def notation_tokens(self, query_text: str, tokenize: Callable[[str], list[str]]) -> list[str]:
        """Tokens of the query's notation (its LaTeX mapped onto the table first)."""
        latex = latex_notation(query_text)
        out = tokenize(latex) if latex else []
        if self.notation is not None:
            out += self.notation.tokens(f"{query_text} {latex}", tokenize)
        return out

    def notation_constants(self, query: str) -> list[str]:
        if self.notation is None:
            return []
        return self.notation.constants(f"{query} {latex_notation(query)}")

    def vocabulary_words(self, query: str) -> list[str]:
        return self.vocabulary.words(query) if self.vocabulary is not None else []

    def vocabulary_weights(self, query: str) -> dict[str, float]:
        return self.vocabulary.weighted(query) if self.vocabulary is not None else {}

    def namesakes(
        self, query: str, prior: np.ndarray, symbols: bool = True
    ) -> list[tuple[int, float]]:
        """The declarations the query names, best first, with their cover (the share of the
        query's words the matched key spans; see `names.py`); with `symbols`, the constants
        its notation stands for too, and the notions its LaTeX names (`latex.notion_constants`).
        A query's LaTeX is read as Lean first (`latex.to_lean`), always: `latex` is a mapping
        family of the name-part ranking (`nameparts.FAMILIES`), and leaving it out there leaves
        this reading on."""
        if self.keys is None:
            return []
        latex, notions = latex_notation(query), notion_constants(query)
        query = to_lean(query)  # LaTeX read as Lean: `\\mathbb{Q}_p` is `ℚ_[p]`, no `mathbb` word
        words = [w for w in query_words(query) if w not in STOPWORDS]
        n_words = max(1, len(words))
        # the constant a symbol stands for covers the query but for its variables (`X ≃ₜ Y`)
        n_named = max(1, len([w for w in words if not _variable(w)]))
        wanted = {k: (n, False) for k, n in query_keys(query).items()}
        # in a formula, one-letter words run together are its variables (`G →* H`: `hg`); out
        # of one they may name a concept (`L^p` space: `lp`, `H^1`: `H1`)
        joined_variables = _formula(query)
        by_symbol = self.notation.named(f"{query} {latex}") if (
            symbols and self.notation is not None) else []  # fmt: skip
        by_symbol += notions if symbols else []  # a notion its LaTeX notation names (`GL_n`)
        for const in by_symbol:  # a symbol names it, where its notation is global
            for k in name_keys(const)[-1:]:
                wanted[k] = (max(wanted.get(k, (0, False))[0], 1), True)
        cover: dict[int, float] = {}
        for key, (n, symbol) in wanted.items():
            if not symbol and (
                (joined_variables and len(key) <= n)
                or (n == 1 and (len(key) <= 2 or key in _WEAK_KEYS))
            ):
                continue
            post = self.keys.postings(key)
            if len(post) == 0 or len(post) > MAX_POSTINGS:
                continue
            c = min(1.0, n / (n_named if symbol else n_words))
            if c < MIN_COVER:
                continue
            for p in post.tolist():
                # a name that is the whole query may be anything (`add_comm`), and so may the
                # constant a symbol of the query stands for; a name that is part of the query
                # must be a concept at the root ("compact set" names `IsCompact`, while
                # "multiplicative order" does not name `PowerSeries.order`)
                named = c >= 1.0 or symbol
                if c > cover.get(p, 0.0) and (
                    named or (self.kinds[p] == CONCEPT and self.depth[p] == 0)
                ):
                    cover[p] = c
        ranked = sorted(
            cover,
            key=lambda p: (-cover[p], self.kinds[p] != CONCEPT, int(self.depth[p]), -prior[p], p),
        )
        return [(p, cover[p]) for p in ranked[:MAX_NAMESAKES]]

    def successor(self, position: int) -> int | None:
        """The position of a renamed declaration's successor, or None."""
        if self.renames is None:
            return None
        j = int(self.renames[position])
        return j if j >= 0 else None
