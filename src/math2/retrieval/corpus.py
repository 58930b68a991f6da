"""What an index is built from, read from the store in one session (`read_corpus`): a
library's active, completable declarations in id order, their recorded dependencies, their
informal texts (`informal.py`), the search aids (`aids.py`), Mathlib's notation commands as its
import stored them, and each alias given its target's statement (`aliases.py`).

Functor bodies (issue 43 §2): Rocq's importer gives a module that `Include`s a functor the
functor's lemmas under the module's own name (`Stdlib.Arith.PeanoNat.Nat.add_comm`, marked
`included_from`) and marks the functor's own copy `functor_body` (a name no user can write).
Where such a copy stands for a body lemma, the body lemma is left out of the index by default
(`functor_bodies=False`): the name users write is what a search finds; a body lemma that no
module includes stays, the only record of what it states.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from math2.retrieval.aliases import borrow as borrow_alias_texts
from math2.retrieval.informal import Informal, read_informal
from math2.retrieval.notation import stored_notation
from math2.retrieval.parts import BATCH
from math2.retrieval.text import ALIAS_VERSION
from math2.util.progress import stage, track

if TYPE_CHECKING:
    from math2.store import Store


class Row(NamedTuple):
    """One declaration as the index reads it."""

    id: int
    name: str
    statement: str | None
    docstring: str | None
    module: str | None
    kind: str | None
    extra: dict[str, Any]


@dataclass
class Corpus:
    """Everything `build_index` reads from the store (see the module docstring)."""

    rows: list[Row]
    docs: list[str | None]  # the docstrings the index may use (held-out ones None)
    deps: dict[int, list[str]]
    informal: dict[int, Informal]
    aid_titles: dict[int, str] = field(default_factory=dict)
    aid_parents: dict[int, str] = field(default_factory=dict)
    declared: Any = None  # Mathlib's stored notation commands (`notation.stored_notation`)
    functor_bodies_left_out: int = 0


def read_corpus(
    store: Store,
    source: str,
    *,
    text_version: int,
    levers: bool,
    limit: int | None = None,
    only: set[int] | None = None,
    hidden: set[int] | None = None,
    own_dir: Path | None = None,
    hold_out_aids: set[str] | None = None,
    functor_bodies: bool = False,
    say: Callable[[str], None] = lambda _m: None,
    tag: str = "index",
) -> Corpus:
    """The corpus of `source`'s index; `LookupError` when the source or its declarations are
    missing. `levers`: read what issue 33's levers need (`Mention.extra`, stored notation)."""
    from sqlalchemy import select

    from math2.retrieval import aids
    from math2.store import ConstDep, Mention, Source

    hidden = hidden or set()
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == source))
        if src is None:
            raise LookupError(f"source {source!r} is not in the store")
        q = (
            select(
                Mention.id,
                Mention.name,
                Mention.statement,
                Mention.docstring,
                Mention.module,
                Mention.kind,
                Mention.extra,
            )
            .where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
            .order_by(Mention.id)
        )
        read = track(s.execute(q.limit(limit) if limit else q), f"{tag}: read declarations",
                     unit="declarations", batch=BATCH)  # fmt: skip
        rows = [Row(r[0], r[1], r[2], r[3], r[4], r[5], r[6] or {}) for r in read]
        if only is not None:  # a sub-corpus (benchmarks index a pool of mention ids)
            rows = [r for r in rows if r.id in only]
        left_out = 0
        if not functor_bodies:
            rows, left_out = _without_copied_bodies(rows)
            if left_out:
                say(f"{tag}: {left_out} functor-body declarations left out: a module includes "
                    "each under a name users write (--functor-bodies keeps them)")  # fmt: skip
        with stage(f"{tag}: read dependencies and descriptions"):
            deps = dict(s.execute(select(ConstDep.mention_id, ConstDep.deps)).all())
            informal = read_informal(s)
        if not rows:
            raise LookupError(f"{source} has no active, completable mentions to index")
        docs = [None if r.id in hidden else r.docstring for r in rows]
        corpus = Corpus(rows, docs, deps, informal, functor_bodies_left_out=left_out)
        t0 = time.perf_counter()
        if text_version >= 4:
            corpus.aid_titles, corpus.aid_parents = aids.collect(
                s, [r.id for r in rows], [r.name for r in rows], docs,
                own_dir, hold_out_aids or set(), tag,
            )  # fmt: skip
        # Mathlib's notation commands as its import read them: the checkout is not read again
        corpus.declared = stored_notation(s, src.id) if levers and source == "mathlib" else None
        targets = (
            {mid: ((extra or {}).get("successor"), (extra or {}).get("alias_direction"))
             for mid, extra in s.execute(select(Mention.id, Mention.extra).where(
                 Mention.source_id == src.id, Mention.kind == "alias"))}
            if text_version >= ALIAS_VERSION
            else {}
        )  # fmt: skip
    if targets:
        _borrow(corpus, targets, hidden, say)
    if text_version >= 4:
        say(
            f"search aids: {len(corpus.aid_titles)} declarations with titles or main-result "
            f"sentences, {len(corpus.aid_parents)} with an enclosing declaration's docstring "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    return corpus


def _without_copied_bodies(rows: list[Row]) -> tuple[list[Row], int]:
    """`rows` less the functor-body declarations some module includes under its own name."""
    copied = {r.extra.get("included_from") for r in rows} - {None}
    kept = [r for r in rows if not (r.extra.get("functor_body") and r.name in copied)]
    return kept, len(rows) - len(kept)


def _borrow(corpus: Corpus, targets: dict[int, tuple[Any, Any]], hidden: set[int],
            say: Callable[[str], None]) -> None:  # fmt: skip
    """Each alias given its target's statement (and docstring where it has none)."""
    rows = corpus.rows
    at = {r.id: i for i, r in enumerate(rows)}
    stmts, corpus.docs, borrowed = borrow_alias_texts(
        [r.name for r in rows], [r.statement for r in rows], corpus.docs,
        {at[m]: (str(t[0]), t[1]) for m, t in targets.items() if m in at and t[0]},
        {at[m] for m in hidden if m in at},
    )  # fmt: skip
    corpus.rows = [r._replace(statement=st) for r, st in zip(rows, stmts, strict=True)]
    say(f"aliases: {borrowed} given their target's statement")
