"""The one search: a query over the built indexes of one library or several, each hit with its
declaration and its node resolved.

    hits = search("infinitely many primes", index_dir=root, store=store)   # Mathlib by default
    hits = search(query, libraries="all", k=20, index_dir=root)            # every built index

`math2 search`, the web's search page, formalize's retrieval, align's candidates and the
reranker all go through `Searcher.search`, so the same query gives the same hits everywhere.
Which libraries a search covers and how several are merged is `scope.py`'s rule (Mathlib, or the
Lean project's library, by default; `all` merged by a score comparable across libraries).

Without a store a hit carries what the index keeps beside it (name, library, the start of the
statement), so `math2 search` opens no database; with one, each hit's declaration (statement,
docstring, module, kind) and the node it belongs to are read in one query.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from math2.retrieval.cards import Card, Cards, first_line
from math2.retrieval.index import Hit, SearchIndex
from math2.retrieval.informal import InformalNote, InformalNotes
from math2.retrieval.scope import (
    ALL,
    LibraryHit,
    built_libraries,
    default_library,
    search_libraries,
)
from math2.retrieval.text import TEXT_VERSION
from math2.retrieval.weights import USE_RANKER
from math2.util.construct import construct

if TYPE_CHECKING:
    from math2.store import Store


class NoIndex(LookupError):
    """No built index answers the search (the message says what to build)."""


class Declaration(BaseModel):
    """A hit's declaration, as the store has it."""

    mention_id: int
    name: str
    kind: str | None = None
    module: str | None = None
    statement: str = ""
    docstring: str | None = None


class NodeRef(BaseModel):
    """The node a hit's declaration belongs to."""

    id: int
    key: str
    title: str | None = None


class HitSummary(BaseModel):
    """A hit as `math2 search --json` prints it."""

    rank: int
    name: str
    library: str
    mention_id: int  # the declaration's id in the store
    kind: str | None
    module: str | None
    doc: str | None  # the docstring's first line
    statement: str
    renamed_from: str | None  # the deprecated name the query found; `name` is its successor
    deprecated: str | None  # since when this hit itself is deprecated (its successor not found)
    successor: str | None  # what it says to use instead, as its source writes it
    node: str | None
    informal: str | None  # the first line of the informal text the index holds (`informal.py`)
    informal_origin: str | None  # who wrote it and whether a person reviewed it
    order_score: float  # what orders this query's hits (the learned ranker's mixed score, or
    # the fusion's sum of weighted reciprocal ranks): not comparable across queries or indexes


class SearchHit(BaseModel):
    """One result of a search, in its library, resolved."""

    library: str
    hit: Hit  # the fused hit in its library's index (ranks, position)
    score: float  # comparable across libraries when several were searched
    statement: str  # the store's statement when resolved, else the index's snippet
    card: Card = Card()  # kind, module, the docstring's first line (the store's when resolved)
    informal: InformalNote | None = None  # the informal text the index holds, with its origin
    declaration: Declaration | None = None
    node: NodeRef | None = None

    @property
    def name(self) -> str:
        return self.hit.name

    def summary(self, rank: int) -> HitSummary:
        """What a script reads of this hit (`math2 search --json`): the rank, and the score
        only under a name that says what it is (its scale depends on the query and the parts
        built)."""
        note = self.informal
        return HitSummary(
            rank=rank, name=self.name, library=self.library, mention_id=self.mention_id,
            kind=self.card.kind,
            module=self.card.module, doc=self.card.doc, statement=self.statement,
            renamed_from=self.hit.renamed_from, deprecated=self.card.deprecated,
            successor=self.card.successor, node=self.node.key if self.node else None,
            informal=note.text if note else None, informal_origin=note.origin if note else None,
            order_score=self.hit.score,
        )  # fmt: skip

    @property
    def mention_id(self) -> int:
        return self.hit.mention_id


class Searcher:
    """Searches the indexes under `index_dir` (one folder per library); opened indexes are kept
    and reopened when rebuilt. With a `store`, hits are resolved to declarations and nodes."""

    def __init__(
        self,
        index_dir: Path,
        store: Store | None = None,
        cwd: Path | None = None,
        *,
        ranker: bool = USE_RANKER,
    ):
        self.root = Path(index_dir)
        self.store = store
        self.cwd = cwd
        self.ranker = ranker  # order by the learned ranker where the index has one
        self._open: dict[str, tuple[int, SearchIndex]] = {}
        self._cards: dict[int, tuple[SearchIndex, Cards, InformalNotes]] = {}  # by opened index
        self._lock = threading.Lock()  # bm25s and the encoder are not meant for concurrent calls

    def built(self) -> dict[str, Path]:
        return built_libraries(self.root)

    def default(self) -> str | None:
        """The library a search covers when none is named (`scope.default_library`)."""
        return default_library(self.built(), self.cwd or Path.cwd())

    def scope(self, libraries: str | Sequence[str] | None = None) -> list[str]:
        """The libraries a search covers: `None` the default, `"all"` every built one, else the
        ones named. Raises `NoIndex` saying what to build."""
        built = self.built()
        if not built:
            raise NoIndex(
                f"No search index is built (looked in {self.root}): run `math2 build` or "
                "`math2 index build --library mathlib`"
            )
        if libraries == ALL:
            return list(built)
        if libraries is None:
            first = self.default()
            if first is None:
                raise NoIndex(
                    f"several indexes under {self.root} ({', '.join(built)}) and none is "
                    "mathlib: name one"
                )
            return [first]
        names = [libraries] if isinstance(libraries, str) else list(libraries)
        for name in names:
            if name not in built:
                raise NoIndex(
                    f"No search index is built for {name!r} under {self.root} (built: "
                    f"{', '.join(built)}): run `math2 index build --library {name}`"
                )
        return names

    def index(self, library: str) -> SearchIndex:
        """The opened index of a built library (reopened when its meta.json changed)."""
        folder = self.built().get(library)
        if folder is None:
            self.scope([library])  # raises with the message
            raise NoIndex(f"No search index is built for {library!r} under {self.root}")
        stamp = (folder / "meta.json").stat().st_mtime_ns
        with self._lock:
            cached = self._open.get(library)
            if cached is None or cached[0] != stamp:
                try:
                    cached = (stamp, SearchIndex(folder, use_ranker=self.ranker))
                except FileNotFoundError as exc:
                    raise NoIndex(str(exc)) from exc
                except (OSError, ValueError, KeyError) as exc:
                    raise NoIndex(f"the search index at {folder} cannot be read ({exc}): "
                                  "rebuild it") from exc  # fmt: skip
                if cached[1].text_version < TEXT_VERSION:  # its text lacks what search reads
                    raise NoIndex(
                        f"the search index at {folder} was built by an older math2 (index text "
                        f"v{cached[1].text_version}, this one reads v{TEXT_VERSION}): run "
                        f"`math2 index build --library {library}`"
                    )
                self._open[library] = cached
        return cached[1]

    def indexes(self, libraries: str | Sequence[str] | None = None) -> dict[str, SearchIndex]:
        return {name: self.index(name) for name in self.scope(libraries)}

    def search(
        self, query: str, libraries: str | Sequence[str] | None = None, k: int = 10
    ) -> list[SearchHit]:
        """The top `k` hits for `query` over `libraries` (see `scope`), resolved."""
        indexes = self.indexes(libraries)
        with self._lock:
            if len(indexes) == 1:
                ((name, index),) = indexes.items()
                found = [LibraryHit(name, h, h.score) for h in index.search(query, k)]
            else:
                found = search_libraries(indexes, query, k, first=self.default())
        return self.resolve(found, indexes)

    def resolve(self, found: list[LibraryHit], indexes: dict[str, SearchIndex]) -> list[SearchHit]:
        """Each hit with its statement; with a store, its declaration and node (one query)."""
        rows = self._declarations([f.hit.mention_id for f in found]) if self.store else {}
        shown: dict[tuple[str, int], Card] = {}  # each library's hits' cards, read at once
        snippets: dict[tuple[str, int], str] = {}  # and the statements the store did not give
        for name, index in indexes.items():
            mine = [f for f in found if f.library == name]
            at = [f.hit.position for f in mine]
            shown.update(zip([(name, p) for p in at], self._cards_of(index)[0].many(at),
                             strict=True))  # fmt: skip
            at = [p for p, f in zip(at, mine, strict=True) if f.hit.mention_id not in rows]
            snippets.update(zip([(name, p) for p in at], index.snippets(at), strict=True))
        hits = []
        for f in found:
            decl, node = rows.get(f.hit.mention_id, (None, None))
            notes = self._cards_of(indexes[f.library])[1]
            card = shown[f.library, f.hit.position]
            statement = decl.statement if decl else snippets[f.library, f.hit.position]
            if decl:  # the store's own fields; deprecation as the index recorded it
                doc = first_line(decl.docstring) or None
                card = card.model_copy(update={"kind": decl.kind, "module": decl.module,
                                               "doc": doc})  # fmt: skip
            # unvalidated: the values come typed from the index and the store (see index.py)
            hits.append(construct(SearchHit, {
                "library": f.library, "hit": f.hit, "score": f.score, "statement": statement,
                "card": card, "informal": notes[f.hit.position], "declaration": decl,
                "node": node,
            }))  # fmt: skip
        return hits

    def _cards_of(self, index: SearchIndex) -> tuple[Cards, InformalNotes]:
        kept = self._cards.get(id(index))
        if kept is None:  # the index is kept with its cards, so its id is never reused
            kept = (index, Cards(index.folder), InformalNotes(index.folder))
            self._cards[id(index)] = kept
        return kept[1], kept[2]

    def _declarations(self, ids: list[int]) -> dict[int, tuple[Declaration, NodeRef | None]]:
        if not ids or self.store is None:
            return {}
        from sqlalchemy import select

        from math2.store import Mention, Node

        q = (
            select(Mention, Node.id, Node.key, Node.title)
            .outerjoin(Node, Node.id == Mention.node_id)
            .where(Mention.id.in_(ids))
        )
        with self.store.session() as s:
            out = {}
            for m, node_id, key, title in s.execute(q).all():
                decl = Declaration(mention_id=m.id, name=m.name, kind=m.kind, module=m.module,
                                   statement=m.statement or "", docstring=m.docstring)  # fmt: skip
                node = NodeRef(id=node_id, key=key, title=title) if node_id else None
                out[m.id] = (decl, node)
        return out


def search(
    query: str,
    libraries: str | Sequence[str] | None = None,
    k: int = 10,
    *,
    index_dir: Path,
    store: Store | None = None,
    cwd: Path | None = None,
) -> list[SearchHit]:
    """The top `k` hits for `query` (see `Searcher.search`); `libraries`: None for the default
    library, `"all"`, or names."""
    return Searcher(index_dir, store, cwd).search(query, libraries, k)
