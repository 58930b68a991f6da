"""The corpus schema: SQLAlchemy 2 models. Migrations in `migrations/` must follow this file."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Stable constraint names, so that migrations are the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base of all corpus tables."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JSON}  # noqa: RUF012


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Created:
    """A creation timestamp on every row."""

    created_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), default=_now, server_default=func.now()
    )


class Source(Created, Base):
    """A library, list or dataset of the manifest, as last synchronised."""

    __tablename__ = "sources"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    title: Mapped[str] = mapped_column(Text)
    system: Mapped[str] = mapped_column(String(40))
    kind: Mapped[str] = mapped_column(String(40))
    licence: Mapped[str] = mapped_column(String(200))
    per_item_licence: Mapped[bool] = mapped_column(Boolean, default=False)
    authored: Mapped[str] = mapped_column(String(10))
    authored_reason: Mapped[str] = mapped_column(Text)
    route: Mapped[str] = mapped_column(Text)
    intake_class: Mapped[str] = mapped_column(String(40))
    bindings: Mapped[bool] = mapped_column(Boolean, default=False)
    decided_by: Mapped[str] = mapped_column(Text)
    manifest_digest: Mapped[str] = mapped_column(String(64))
    pins: Mapped[list[Pin]] = relationship(
        back_populates="source",
        order_by="Pin.id",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )

    __table_args__ = (CheckConstraint("authored IN ('human', 'ai', 'mixed')", name="authored"),)


class Pin(Created, Base):
    """A source at one commit (+ toolchain) or version, with the licence and class there."""

    __tablename__ = "pins"
    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(200))
    commit: Mapped[str | None] = mapped_column(String(64))
    version: Mapped[str | None] = mapped_column(String(200))
    toolchain: Mapped[str | None] = mapped_column(String(200))
    licence: Mapped[str] = mapped_column(String(200))
    intake_class: Mapped[str] = mapped_column(String(40))
    bindings: Mapped[bool] = mapped_column(Boolean, default=False)
    decided_by: Mapped[str] = mapped_column(Text)
    is_current: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[Source] = relationship(back_populates="pins")

    __table_args__ = (UniqueConstraint("source_id", "key", name="uq_pins_source_key"),)


class Node(Created, Base):
    """A row of the corpus: one mathematical result, keyed (where known) by a Wikidata id."""

    __tablename__ = "nodes"
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(200), unique=True)
    wikidata: Mapped[str | None] = mapped_column(String(20), index=True)
    title: Mapped[str | None] = mapped_column(Text)
    msc: Mapped[str | None] = mapped_column(String(200))
    level: Mapped[str] = mapped_column(String(4), default="W0")
    selected_by: Mapped[str | None] = mapped_column(String(80))
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Mention(Created, Base):
    """A declaration of a library at a pin (K4.2): active until a bump retires it."""

    __tablename__ = "mentions"
    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"))
    pin_id: Mapped[int] = mapped_column(ForeignKey("pins.id"))
    name: Mapped[str] = mapped_column(String(1000))
    kind: Mapped[str | None] = mapped_column(String(40))
    module: Mapped[str | None] = mapped_column(String(500))
    statement: Mapped[str | None] = mapped_column(Text)
    docstring: Mapped[str | None] = mapped_column(Text)
    allow_completion: Mapped[bool] = mapped_column(Boolean, default=True)
    type_hash: Mapped[str | None] = mapped_column(String(64), index=True)
    licence: Mapped[str] = mapped_column(String(200))
    intake_class: Mapped[str] = mapped_column(String(40))
    authored: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(10), default="active")
    retired_pin_id: Mapped[int | None] = mapped_column(ForeignKey("pins.id"))
    successor: Mapped[str | None] = mapped_column(String(1000))
    node_id: Mapped[int | None] = mapped_column(ForeignKey("nodes.id", ondelete="SET NULL"))
    outcome: Mapped[str] = mapped_column(String(20), default="formal_only")
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (
        CheckConstraint("status IN ('active', 'retired')", name="status"),
        CheckConstraint("authored IN ('human', 'ai', 'mixed')", name="authored"),
        Index("ix_mentions_source_name", "source_id", "name"),
        # hygiene's name and namespace lookups (lean.library.LibraryNames): every condition an
        # equality but the name, so the planner takes it without statistics
        Index("ix_mentions_library_names", "source_id", "status", "allow_completion", "name"),
        # the web pages: a node's declarations, a library's counts and its pins' history
        Index("ix_mentions_node_id", "node_id", "source_id"),
        Index("ix_mentions_source_status", "source_id", "status"),
        Index("ix_mentions_pin_id", "pin_id"),
        Index("ix_mentions_retired_pin_id", "retired_pin_id"),
    )


class ModelEntry(Created, Base):
    """The model register (X08): no model writes text into the corpus unless it is here."""

    __tablename__ = "models"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    revision: Mapped[str] = mapped_column(String(200), default="")
    provider: Mapped[str | None] = mapped_column(String(200))
    terms: Mapped[str | None] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (UniqueConstraint("name", "revision", name="uq_models_name_revision"),)


class Review(Created, Base):
    """A person's confirmation or rejection of a row of another table."""

    __tablename__ = "reviews"
    id: Mapped[int] = mapped_column(primary_key=True)
    target_table: Mapped[str] = mapped_column(String(40))
    target_id: Mapped[int] = mapped_column(Integer)
    reviewer: Mapped[str] = mapped_column(String(200))
    verdict: Mapped[str] = mapped_column(String(20))
    note: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint("verdict IN ('confirmed', 'rejected', 'needs_work')", name="verdict"),
        Index("ix_reviews_target", "target_table", "target_id"),
    )


# K6.5: a library (or declaration) marked so has the rules of an AI-written one.
AI_AUTHORED = ("ai", "mixed")


class BindingStatus(StrEnum):
    """Where a binding is in its lifecycle: proposed → checked (or check_failed) → reviewed."""

    PROPOSED = "proposed"  # by formalize, align or a crosswalk; not yet through Lean
    CHECKED = "checked"  # hygiene, compile and axioms passed at the pinned build
    CHECK_FAILED = "check_failed"  # the check refused it (the reason is in `check`)
    CONFIRMED = "confirmed"  # a person confirmed it (only from `checked`)
    REJECTED = "rejected"  # a person rejected it


class BindingOrigin(StrEnum):
    """Who proposed a binding."""

    FORMALIZE = "formalize"  # a model wrote the Lean statement (agent text)
    ALIGN = "align"  # the align role judged a candidate pair `same`
    CROSSWALK = "crosswalk"  # a crosswalk (a list or a library) names the declaration
    PERSON = "person"  # a person made it


class Binding(Created, Base):
    """A node's Lean side (E5, spec 07.3): a library declaration (`mention_id`) or a statement a
    model wrote (`agent_text_id`); checked by Lean, then it needs a person's review."""

    __tablename__ = "bindings"
    id: Mapped[int] = mapped_column(primary_key=True)
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    mention_id: Mapped[int | None] = mapped_column(ForeignKey("mentions.id"))
    status: Mapped[str] = mapped_column(String(20), default=BindingStatus.PROPOSED.value)
    review_id: Mapped[int | None] = mapped_column(ForeignKey("reviews.id"))
    # A binding a role proposed points at the attempt that proposed it.
    attempt_id: Mapped[int | None] = mapped_column(ForeignKey("attempts.id", ondelete="SET NULL"))
    origin: Mapped[str | None] = mapped_column(String(20))
    # The formalize role's statement (agent text) when no library declares the Lean side.
    agent_text_id: Mapped[int | None] = mapped_column(
        ForeignKey("agent_texts.id", ondelete="SET NULL")
    )
    # The last Lean check: verdict, reason, the Lean identity, axioms and type hash of the build.
    lean_check: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (
        UniqueConstraint("node_id", "mention_id", name="uq_bindings_node_mention"),
        CheckConstraint(
            "status IN ('proposed', 'checked', 'check_failed', 'confirmed', 'rejected')",
            name="status",
        ),
        CheckConstraint(
            "origin IS NULL OR origin IN ('formalize', 'align', 'crosswalk', 'person')",
            name="origin",
        ),
        Index("ix_bindings_status_id", "status", "id"),  # the review queue (migration 0010)
    )


class Crosswalk(Created, Base):
    """A node's same_as link to a declaration in some system, with the source that proposed it."""

    __tablename__ = "crosswalks"
    id: Mapped[int] = mapped_column(primary_key=True)
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    system: Mapped[str] = mapped_column(String(40))
    target: Mapped[str] = mapped_column(String(1000))
    mention_id: Mapped[int | None] = mapped_column(ForeignKey("mentions.id", ondelete="SET NULL"))
    relation: Mapped[str] = mapped_column(String(20), default="same_as")
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id"))
    pin_id: Mapped[int | None] = mapped_column(ForeignKey("pins.id"))
    status: Mapped[str] = mapped_column(String(20), default="accepted")
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (
        UniqueConstraint(
            "node_id", "system", "target", "source_id", name="uq_crosswalks_node_target"
        ),
        CheckConstraint("status IN ('candidate', 'accepted', 'rejected')", name="status"),
        Index("ix_crosswalks_source_id", "source_id"),
    )


class TextRecord(Created, Base):
    """Informal text with its zone, licence, attribution and author (a person or a model)."""

    __tablename__ = "texts"
    id: Mapped[int] = mapped_column(primary_key=True)
    node_id: Mapped[int | None] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    mention_id: Mapped[int | None] = mapped_column(ForeignKey("mentions.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(40))  # docstring, comment, prose, statement…
    body: Mapped[str] = mapped_column(Text)
    zone: Mapped[str] = mapped_column(String(20), default="prose")
    licence: Mapped[str] = mapped_column(String(200))
    share_alike: Mapped[bool] = mapped_column(Boolean, default=False)
    attribution: Mapped[str] = mapped_column(Text)
    author_kind: Mapped[str] = mapped_column(String(10))
    author: Mapped[str | None] = mapped_column(Text)
    model_id: Mapped[int | None] = mapped_column(ForeignKey("models.id"))
    prompt_hash: Mapped[str | None] = mapped_column(String(64))
    source_id: Mapped[int | None] = mapped_column(ForeignKey("sources.id"))
    pin_id: Mapped[int | None] = mapped_column(ForeignKey("pins.id"))

    __table_args__ = (
        CheckConstraint("author_kind IN ('person', 'agent')", name="author_kind"),
        # X08: text an agent wrote names a registered model and the prompt it was given.
        CheckConstraint(
            "author_kind = 'person' OR (model_id IS NOT NULL AND prompt_hash IS NOT NULL)",
            name="agent_has_model",
        ),
        CheckConstraint("node_id IS NOT NULL OR mention_id IS NOT NULL", name="has_target"),
        Index("ix_texts_node_id", "node_id"),
        Index("ix_texts_mention_id", "mention_id"),
        Index("ix_texts_source_id", "source_id"),
    )


class SearchAid(Created, Base):
    """Text an AI-written informal dataset gives a declaration (K6.4: Herald, FrenzyMath's
    mathlib_informal): a search aid and an input to the clustering, never text of a node and
    never shown as a declaration's statement; the model that wrote it, as the dataset's card
    names it, else `unknown` (X08)."""

    __tablename__ = "search_aids"
    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"))
    pin_id: Mapped[int] = mapped_column(ForeignKey("pins.id"))
    mention_id: Mapped[int] = mapped_column(ForeignKey("mentions.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(40))  # informal_statement, informal_name, …
    body: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (
        Index("ix_search_aids_mention_id", "mention_id"),
        Index("ix_search_aids_source_id", "source_id"),
    )


class NotationRecord(Base):
    """A notation command a Lean library declares, as its import read it from the source
    (`importers.lean_notation`): its symbol (None where no atom is one), every atom, the
    constants it unfolds to as written, and the namespace they resolve in. The search index
    and hygiene's token table read these rather than the checkout again; `atoms` None: a row
    stored before atoms were kept (not recorded)."""

    __tablename__ = "notations"
    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"))
    pin_id: Mapped[int] = mapped_column(ForeignKey("pins.id"))
    module: Mapped[str] = mapped_column(String(500))
    line: Mapped[int] = mapped_column(Integer)
    symbol: Mapped[str | None] = mapped_column(Text, nullable=True)
    atoms: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    kind: Mapped[str | None] = mapped_column(String(20), nullable=True)
    leading_atom: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    constants: Mapped[list[str]] = mapped_column(JSON, default=list)
    namespace: Mapped[str] = mapped_column(Text, default="")
    scoped: Mapped[bool] = mapped_column(Boolean, default=False)
    local: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (Index("ix_notations_source_pin", "source_id", "pin_id"),)


class LeanResult(Base):
    """A cached compile result, keyed by (toolchain, Mathlib commit, header, code)."""

    __tablename__ = "lean_results"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    toolchain: Mapped[str] = mapped_column(String(200))
    mathlib_commit: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20))
    result: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), default=_now, server_default=func.now()
    )


class ConstDep(Base):
    """The constants a declaration uses (lean_scout const_dep), for selection and the prior."""

    __tablename__ = "const_deps"
    mention_id: Mapped[int] = mapped_column(
        ForeignKey("mentions.id", ondelete="CASCADE"), primary_key=True
    )
    deps: Mapped[list[str]] = mapped_column(JSON, default=list)


class SigninBudget(Base):
    """One sign-in budget of the web app (per client address, per account name), shared by
    every server process: `tat` is GCRA's theoretical arrival time in Unix seconds, changed
    only by conditional updates (`math2.web.budgets`); a row whose `tat` is past is full."""

    __tablename__ = "web_signin_budgets"
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    tat: Mapped[float] = mapped_column(Float, index=True)


class KnownAddress(Base):
    """An address a reviewer signed in from (`last_at`, Unix seconds): her attempts from there
    skip her name's budget, whoever floods it."""

    __tablename__ = "web_known_addresses"
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    username: Mapped[str] = mapped_column(String(200), primary_key=True)
    last_at: Mapped[float] = mapped_column(Float, index=True)


class WebSecret(Base):
    """A secret of the web app generated once and kept (the session cookie's signing key), so
    that a restart and every server process over the store sign alike."""

    __tablename__ = "web_secrets"
    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))
