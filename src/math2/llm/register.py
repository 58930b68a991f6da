"""The model register (rule X08): no model writes text for math2 unless it is registered."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.llm.types import UnregisteredModel
from math2.store import ModelEntry


def add_model(
    session: Session,
    name: str,
    *,
    revision: str = "",
    provider: str | None = None,
    terms: str | None = None,
    notes: str | None = None,
) -> tuple[ModelEntry, bool]:
    """Register a model (idempotent); (entry, whether it was new). Changed fields are updated."""
    if not name.strip():
        raise ValueError("a model needs a name")
    entry = session.scalar(
        select(ModelEntry).where(ModelEntry.name == name, ModelEntry.revision == revision)
    )
    new = entry is None
    if entry is None:
        entry = ModelEntry(name=name, revision=revision)
        session.add(entry)
    for field, value in (("provider", provider), ("terms", terms), ("notes", notes)):
        if value is not None:
            setattr(entry, field, value)
    session.flush()
    return entry, new


def list_models(session: Session) -> list[ModelEntry]:
    """Every registered model, by name."""
    return list(session.scalars(select(ModelEntry).order_by(ModelEntry.name, ModelEntry.revision)))


def require_model(session: Session, name: str, revision: str | None = None) -> ModelEntry:
    """The register's entry for `name` (newest revision unless one is named), or refuse."""
    q = select(ModelEntry).where(ModelEntry.name == name)
    if revision is not None:
        q = q.where(ModelEntry.revision == revision)
    entry = session.scalars(q.order_by(ModelEntry.id.desc())).first()
    if entry is None:
        raise UnregisteredModel(
            f"model {name!r} is not in the model register (rule X08): register it with "
            f"`math2 models add {name} --provider … --terms …` first"
        )
    return entry
