"""Bindings to AI-written libraries (K6.5): the definitions a statement uses need review too.

A binding whose declaration belongs to a library the manifest marks `authored: ai` or `mixed`
can be confirmed only when each definition of that library its statement uses has a person's
confirmation (a `reviews` row on the definition's mention, verdict `confirmed`).
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel
from sqlalchemy import DateTime, Text, insert, literal, select
from sqlalchemy.orm import Session

from math2.errors import Math2Error
from math2.roles.align.sides import same_library_decls, used_names
from math2.store.models import AI_AUTHORED, Binding, Mention, Review, Source


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


DEFINITION_KINDS = ("def", "abbrev", "structure", "class", "inductive", "instance", "opaque")


class DefinitionToReview(BaseModel):
    """One definition of an AI-written library that a bound statement uses."""

    mention_id: int
    name: str
    statement: str
    confirmed: bool


class BindingBlocked(Math2Error):
    """A binding that cannot be confirmed yet (definitions of an AI library unconfirmed)."""


def definitions_to_review(s: Session, binding_id: int) -> list[DefinitionToReview]:
    """The AI-library definitions the binding's statement uses (none for human libraries)."""
    b = s.get(Binding, binding_id)
    if b is None:
        return []
    m = s.get(Mention, b.mention_id) if b.mention_id is not None else None
    if m is None:  # a model's statement: no library, no definitions of one
        return []
    authored = s.scalar(select(Source.authored).where(Source.id == m.source_id))
    if m.authored not in AI_AUTHORED and authored not in AI_AUTHORED:
        return []
    defs = [d for d in same_library_decls(s, m, used_names(s, m)) if d.kind in DEFINITION_KINDS]
    confirmed = set(
        s.scalars(
            select(Review.target_id).where(
                Review.target_table == "mentions",
                Review.target_id.in_([d.id for d in defs]),
                Review.verdict == "confirmed",
            )
        )
    )
    return [
        DefinitionToReview(
            mention_id=d.id, name=d.name, statement=d.statement or "", confirmed=d.id in confirmed
        )
        for d in defs
    ]


def require_definitions_confirmed(s: Session, binding_id: int) -> None:
    """Raise BindingBlocked naming each AI-library definition still unconfirmed."""
    missing = [d.name for d in definitions_to_review(s, binding_id) if not d.confirmed]
    if missing:
        raise BindingBlocked(
            f"binding {binding_id} uses definitions of an AI-written library that no person has "
            f"confirmed yet: {', '.join(missing)} (confirm each definition first)"
        )


class DefinitionMissing(Math2Error):
    """No declaration has that id."""


class DefinitionDecided(Math2Error):
    """The definition was confirmed already (by another person, or a racing request)."""


def confirm_definition(s: Session, mention_id: int, reviewer: str, note: str = "") -> Review:
    """A person's confirmation of one definition of an AI-written library: one `reviews` row per
    definition, written by one conditional INSERT (a second confirmation, or a racing one,
    raises `DefinitionDecided` and writes nothing)."""
    # PostgreSQL: the mention's row lock makes a racing confirmation wait, then its INSERT (a new
    # statement, a new snapshot) sees the first one's row. SQLite: the INSERT … WHERE NOT EXISTS
    # runs under the database's write lock.
    found = s.scalar(
        select(Mention.id).where(Mention.id == mention_id).with_for_update(key_share=True)
    )
    if found is None:
        raise DefinitionMissing(f"declaration {mention_id} does not exist")
    confirmed = (
        Review.target_table == "mentions",
        Review.target_id == mention_id,
        Review.verdict == "confirmed",
    )
    values = select(
        literal("mentions"), literal(mention_id), literal(reviewer), literal("confirmed"),
        literal(note or None, type_=Text), literal(_now(), type_=DateTime(timezone=True)),
    ).where(~select(Review.id).where(*confirmed).exists())  # fmt: skip
    cols = ["target_table", "target_id", "reviewer", "verdict", "note", "created_at"]
    written = s.scalar(
        insert(Review).from_select(cols, values, include_defaults=False).returning(Review.id)
    )
    if written is None:
        raise DefinitionDecided(f"declaration {mention_id} was already confirmed")
    return s.get_one(Review, written)
