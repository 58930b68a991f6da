"""Tables of model-driven work: runs, items, attempts, the LLM response cache, agent text waiting
for a person, check verdicts, the sample audit, reviewers and store locks.

Agent text never becomes node text by itself: a role writes `AgentText` rows (status `pending`);
only a person's review (a `Review` row) turns one into a `TextRecord` or a binding.
"""

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
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from math2.store.models import Base, Created, _now


def _in(column: str, enum: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in enum)})"


class RunStatus(StrEnum):
    """Where a run is."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"  # stopped early (an endpoint down, interrupted): resumable, items pending


class SegmentStatus(StrEnum):
    """How one drive of a run (a segment) ended."""

    RUNNING = "running"  # being driven now, or its driver died (then `killed` when listed)
    DONE = "done"
    STOPPED = "stopped"  # stopped early, with its reason
    FAILED = "failed"  # the driver raised, with its error
    KILLED = "killed"  # its driver died (its lease expired, or its process is gone)
    LOST = "lost"  # its driver lost the lease to another one and stopped


class ItemStatus(StrEnum):
    """Where one item of a run is."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class AgentTextKind(StrEnum):
    """What a role wrote."""

    FORMAL_STATEMENT = "formal_statement"  # formalize: Lean statement for an informal one
    INFORMAL_STATEMENT = "informal_statement"  # informalize: statement of a declaration
    DESCRIPTION = "description"  # informalize: a search aid (K06: never node text)
    AUGMENTATION = "augmentation"  # Herald's augmentations
    REASONING = "reasoning"  # trajectory reconstruction


class ReviewStatus(StrEnum):
    """A person's decision on agent text (pending until one is made)."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    EDITED = "edited"
    REJECTED = "rejected"


class Verdict(StrEnum):
    """The verdict of one check on one pair."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the check could not decide (unparseable judge, backend down): never a pass
    SKIP = "skip"


class Grade(StrEnum):
    """Herald's human grading."""

    CORRECT = "correct"
    MINOR = "minor"
    MAJOR = "major"


class Run(Created, Base):
    """A resumable job, identified by job + input key + spec hash.

    Two models or two settings over the same input are two runs side by side.
    """

    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    job: Mapped[str] = mapped_column(String(80))
    key: Mapped[str] = mapped_column(String(200))  # the input key (a digest or source@pin)
    spec_hash: Mapped[str] = mapped_column(String(64), default="", server_default="")
    spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default=text("'{}'"))
    status: Mapped[str] = mapped_column(String(20), default=RunStatus.RUNNING)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("job", "key", "spec_hash", name="uq_runs_job_key_spec"),
        CheckConstraint(_in("status", RunStatus), name="status"),
    )


class RunLease(Base):
    """The claim of a run by the one driver executing it: at most one row per run.

    Taken by an insert, or by a conditional update of an expired row (the expiry and holder that
    were read must still be there), so two drivers — processes on one SQLite file, machines on one
    PostgreSQL — never both hold it. The holder renews `expires_at` by a heartbeat; a row whose
    expiry passed, or whose process is gone on the same machine, is free to take over.
    """

    __tablename__ = "run_leases"
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))  # host:pid:nonce, unique per claim
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    machine: Mapped[str] = mapped_column(String(300))  # host and pid namespace: same machine?
    segment_id: Mapped[int | None] = mapped_column(Integer)
    acquired_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class RunSegment(Base):
    """One time a run was driven: by whom, on which executor, under which spec, how it ended.

    `spec_hash` and `changes` say what it ran under (a resume with `--allow-changed` lists what
    differed from the run's spec); `stats` holds its counts and the items each node ran.
    """

    __tablename__ = "run_segments"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    executor: Mapped[str] = mapped_column(String(20))  # local | ray
    address: Mapped[str | None] = mapped_column(String(300))  # the Ray cluster, if any
    # the executor's options (Ray: batch size, items per node, …), for a resume to reuse
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default=text("'{}'"))
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    holder: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default=SegmentStatus.RUNNING)
    reason: Mapped[str | None] = mapped_column(Text)  # why it stopped or failed
    spec_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    changes: Mapped[list[str]] = mapped_column(JSON, default=list)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    ended_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (CheckConstraint(_in("status", SegmentStatus), name="status"),)


class RunItem(Base):
    """One unit of a run with its state; a resumed run skips every `done` item."""

    __tablename__ = "run_items"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    item: Mapped[str] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(
        String(20), default=ItemStatus.DONE, server_default=ItemStatus.DONE.value
    )
    stage: Mapped[str | None] = mapped_column(String(80))
    error: Mapped[str | None] = mapped_column(Text)
    attempt_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    result: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    finished_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), default=_now, server_default=func.now()
    )

    __table_args__ = (
        UniqueConstraint("run_id", "item", name="uq_run_items_run_item"),
        CheckConstraint(_in("status", ItemStatus), name="status"),
    )


class Attempt(Base):
    """One model call or Lean check of one item: the whole trajectory is these rows.

    Unique on (run, item, stage, round, sample), so a resumed run that replays an item from the
    caches writes nothing twice.
    """

    __tablename__ = "attempts"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    item: Mapped[str] = mapped_column(String(500))
    stage: Mapped[str] = mapped_column(String(80))
    round: Mapped[int] = mapped_column(Integer, default=0)
    sample: Mapped[int] = mapped_column(Integer, default=0)
    model: Mapped[str | None] = mapped_column(String(200))
    template_id: Mapped[str | None] = mapped_column(String(200))
    template_hash: Mapped[str | None] = mapped_column(String(64))
    request: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    response: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    verdict: Mapped[str | None] = mapped_column(String(40))
    error: Mapped[str | None] = mapped_column(Text)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    duration_s: Mapped[float] = mapped_column(Float, default=0.0)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (
        UniqueConstraint("run_id", "item", "stage", "round", "sample", name="uq_attempts_key"),
    )


class LLMResponse(Base):
    """The persistent response cache: model + parameters + messages + sample index → reply."""

    __tablename__ = "llm_responses"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    request: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    response: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), default=_now, server_default=func.now()
    )


class AgentText(Created, Base):
    """Text a model wrote, waiting for (or past) a person's review; never node text by itself."""

    __tablename__ = "agent_texts"
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))
    body: Mapped[str] = mapped_column(Text)
    source_text: Mapped[str | None] = mapped_column(Text)  # what it was written from
    node_id: Mapped[int | None] = mapped_column(ForeignKey("nodes.id", ondelete="SET NULL"))
    mention_id: Mapped[int | None] = mapped_column(ForeignKey("mentions.id", ondelete="SET NULL"))
    item: Mapped[str | None] = mapped_column(String(500))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    attempt_id: Mapped[int | None] = mapped_column(ForeignKey("attempts.id", ondelete="SET NULL"))
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id"))
    template_id: Mapped[str] = mapped_column(String(200))
    template_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20), default=ReviewStatus.PENDING)
    review_id: Mapped[int | None] = mapped_column(ForeignKey("reviews.id"))
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    __table_args__ = (
        CheckConstraint(_in("kind", AgentTextKind), name="kind"),
        CheckConstraint(_in("status", ReviewStatus), name="status"),
        # the review queue's keyset pages (migration 0010)
        Index("ix_agent_texts_status_kind_id", "status", "kind", "id"),
        Index("ix_agent_texts_status_id", "status", "id"),
        Index("ix_agent_texts_node_id", "node_id"),
    )


class CheckResultRow(Created, Base):
    """The verdict of one check (by one checker model, when it uses one) on one pair."""

    __tablename__ = "check_results"
    id: Mapped[int] = mapped_column(primary_key=True)
    pair_key: Mapped[str] = mapped_column(String(64), index=True)  # digest of (informal, formal)
    check: Mapped[str] = mapped_column(String(80))
    checker: Mapped[str] = mapped_column(String(200), default="", server_default="")
    verdict: Mapped[str] = mapped_column(String(10))
    score: Mapped[float | None] = mapped_column(Float)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    agent_text_id: Mapped[int | None] = mapped_column(
        ForeignKey("agent_texts.id", ondelete="CASCADE")
    )
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    attempt_id: Mapped[int | None] = mapped_column(ForeignKey("attempts.id", ondelete="SET NULL"))

    __table_args__ = (
        UniqueConstraint("pair_key", "check", "checker", name="uq_check_results_key"),
        CheckConstraint(_in("verdict", Verdict), name="verdict"),
        Index("ix_check_results_agent_text_id", "agent_text_id"),
    )


class AuditSample(Created, Base):
    """One accepted pair drawn for the sample audit (K9.7), in its stratum."""

    __tablename__ = "audit_samples"
    id: Mapped[int] = mapped_column(primary_key=True)
    audit: Mapped[str] = mapped_column(String(80))  # the name of the drawing
    role: Mapped[str] = mapped_column(String(40))
    library: Mapped[str] = mapped_column(String(80))
    stratum: Mapped[str] = mapped_column(String(80))
    informal: Mapped[str] = mapped_column(Text)
    formal: Mapped[str] = mapped_column(Text)
    pair_key: Mapped[str] = mapped_column(String(64))
    agent_text_id: Mapped[int | None] = mapped_column(
        ForeignKey("agent_texts.id", ondelete="SET NULL")
    )

    __table_args__ = (UniqueConstraint("audit", "pair_key", name="uq_audit_samples_key"),)


class AuditGrade(Created, Base):
    """A person's grade of one audit sample: correct / minor / major, with the reason."""

    __tablename__ = "audit_grades"
    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(ForeignKey("audit_samples.id", ondelete="CASCADE"))
    grader: Mapped[str] = mapped_column(String(200))
    grade: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (
        UniqueConstraint("sample_id", "grader", name="uq_audit_grades_sample_grader"),
        CheckConstraint(_in("grade", Grade), name="grade"),
    )


class Reviewer(Created, Base):
    """A person who may review and grade (local account; the password is only ever hashed)."""

    __tablename__ = "reviewers"
    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(200), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(400))
    active: Mapped[bool] = mapped_column(Boolean, default=True)


class WebSession(Base):
    """A signed-in browser session of the web app, held in the store so that signing out, a new
    password, deactivation or removal ends it at once (the cookie only carries the token; the
    row keeps its SHA-256 digest)."""

    __tablename__ = "web_sessions"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    reviewer_id: Mapped[int] = mapped_column(
        ForeignKey("reviewers.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class StoreLock(Base):
    """A named lock held in the store (one build at a time), with its holder for stale checks."""

    __tablename__ = "locks"
    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))  # host:pid
    acquired_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
