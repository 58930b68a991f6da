"""The notation commands the store keeps (`NotationRecord`): one reader for the search index's
notation pass (`math2.retrieval.notation`) and the hygiene tables (`math2.lean.stored_notation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select

from math2.store.models import NotationRecord, Pin, Source

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def current_notations(
    s: Session, *, source_id: int | None = None, system: str | None = None
) -> list[NotationRecord]:
    """The notation rows stored at their sources' current pins, in the library's file order
    (the order they were stored in): of one source (`source_id`), of every source of one
    `system` (`"lean4"`), or of all."""
    q = select(NotationRecord).join(Pin, Pin.id == NotationRecord.pin_id)
    if system is not None:
        q = q.join(Source, Source.id == NotationRecord.source_id).where(Source.system == system)
    if source_id is not None:
        q = q.where(NotationRecord.source_id == source_id)
    return list(s.scalars(q.where(Pin.is_current.is_(True)).order_by(NotationRecord.id)))
