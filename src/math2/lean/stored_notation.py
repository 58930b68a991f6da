"""The library's notation commands as the store keeps them (`store.NotationRecord`, every atom
since migration 0016), for the hygiene tables (`math2.lean.library.store_tables`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select

from math2.lean.core_types import closed_notation
from math2.lean.library import LibraryDecl
from math2.lean.names import in_namespace

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from math2.store.models import NotationRecord


def stored_notations(
    s: Session, system: str = "lean4"
) -> tuple[list[NotationRecord], bool, list[LibraryDecl]]:
    """(the notation rows of `system`'s sources at their current pins, whether they hold every
    such source's atoms, the declarations of the constants their closed notations name).

    Complete only where each source with active mentions stored its notation commands and every
    row has its atoms: a source imported by a route that reads no source (or before atoms were
    kept) leaves the token table incomplete, and its readers fail closed."""
    from math2.store.models import Mention, Source
    from math2.store.notations import current_notations

    rows = current_notations(s, system=system)
    sources = set(
        s.scalars(
            select(Mention.source_id)
            .join(Source, Source.id == Mention.source_id)
            .where(Source.system == system, Mention.status == "active")
            .distinct()
        )
    )
    complete = bool(sources) and sources <= {r.source_id for r in rows}
    complete = complete and all(r.atoms is not None for r in rows)
    wanted = {  # every name a closed notation's constant may stand for (`core_types.derive`)
        full
        for r in rows
        if (closed := closed_notation(r)) is not None
        for full in in_namespace(closed[1], r.namespace)
    }
    decls = [
        LibraryDecl(name=name, kind=kind or "", statement=statement or "")
        for name, kind, statement in s.execute(
            select(Mention.name, Mention.kind, Mention.statement)
            .join(Source, Source.id == Mention.source_id)
            .where(Source.system == system, Mention.status == "active")
            .where(Mention.name.in_(sorted(wanted)))
        )
    ] if wanted else []  # fmt: skip
    return rows, complete, decls
