"""The corpus report: what the store holds, per library, and what K06 leaves open."""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from math2.store.models import (
    AI_AUTHORED,
    Binding,
    Crosswalk,
    Mention,
    Node,
    SearchAid,
    Source,
    TextRecord,
)

# K15: the open questions K06 lists; shown as unresolved until a person settles them.
OPEN_QUESTIONS = (
    "the Mizar article count (1,493 in the version string, 1,498 in spec 01)",
    "the size of Tau Ceti",
    "the licences of the other 20 Formal Frontier repositories",
    "the effect of the ATLAS v2 preamble",
    "the Coquelicot licence",
    "whether the terms of a model pass on to the data that it made",
)


class SourceRow(BaseModel):
    """One library's line of the report."""

    name: str
    kind: str
    intake_class: str
    authored: str
    mentions_active: int = 0
    mentions_retired: int = 0
    mentions_completable: int = 0
    nodes: int = 0
    bindings: int = 0
    crosswalks: int = 0
    crosswalk_candidates: int = 0
    search_aids: int = 0  # an AI-written informal dataset's rows (K6.4): no mentions of its own

    @property
    def holds_anything(self) -> bool:
        """Whether the store holds anything of the source: mentions (active or retired),
        crosswalk edges (accepted or candidate) or search aids."""
        return bool(
            self.mentions_active
            or self.mentions_retired
            or self.crosswalks
            or self.crosswalk_candidates
            or self.search_aids
        )


class SystemRow(BaseModel):
    """One system's line of the report: its libraries' mentions and the nodes they sit on, and
    the crosswalk edges whose target is a declaration of this system (accepted, and of those
    the ones linked to an imported mention; candidates the align role has not judged)."""

    system: str
    sources: list[str] = []
    mentions_active: int = 0
    nodes: int = 0
    crosswalks: int = 0
    crosswalks_linked: int = 0
    crosswalk_candidates: int = 0


class CorpusReport(BaseModel):
    """The whole report, as data (the CLI renders it)."""

    sources: list[SourceRow]
    systems: list[SystemRow] = []
    nodes: int
    nodes_by_selection: dict[str, int]
    bindings: int
    bindings_to_ai: int
    # Bindings whose Lean side is a statement a model wrote (formalize), in no library.
    bindings_generated: int = 0
    bindings_by_status: dict[str, int] = {}
    crosswalks: int
    text_by_licence: dict[str, int]
    text_by_author: dict[str, int]
    open_questions: tuple[str, ...] = OPEN_QUESTIONS

    @property
    def empty_sources(self) -> list[str]:
        """The sources of which the store holds nothing yet."""
        return [r.name for r in self.sources if not r.holds_anything]

    @property
    def ai_binding_share(self) -> float:
        """Share of bindings whose declaration comes from an ai or mixed library (K6.5)."""
        return self.bindings_to_ai / self.bindings if self.bindings else 0.0


def _grouped(session: Session, *cols, where=None) -> dict:
    q = select(*cols, func.count()).group_by(*cols)
    if where is not None:
        q = q.where(where)
    return {tuple(r[:-1]) if len(r) > 2 else r[0]: r[-1] for r in session.execute(q)}


def build_report(session: Session) -> CorpusReport:
    """Count everything the report shows, in a handful of grouped queries."""
    rows = {
        s.id: SourceRow(name=s.name, kind=s.kind, intake_class=s.intake_class, authored=s.authored)
        for s in session.scalars(select(Source).order_by(Source.id))
    }
    for (sid, status), n in _grouped(session, Mention.source_id, Mention.status).items():
        setattr(rows[sid], f"mentions_{status}", n)
    done = Mention.allow_completion.is_(True) & (Mention.status == "active")
    for sid, n in _grouped(session, Mention.source_id, where=done).items():
        rows[sid].mentions_completable = n
    nodes_per = select(Mention.source_id, func.count(func.distinct(Mention.node_id))).where(
        Mention.node_id.is_not(None)
    )
    for sid, n in session.execute(nodes_per.group_by(Mention.source_id)):
        rows[sid].nodes = n
    bind_q = select(Mention.source_id, func.count()).join(Binding, Binding.mention_id == Mention.id)
    for sid, n in session.execute(bind_q.group_by(Mention.source_id)):
        rows[sid].bindings = n
    for (sid, status), n in _grouped(session, Crosswalk.source_id, Crosswalk.status).items():
        if status == "accepted":
            rows[sid].crosswalks = n
        elif status == "candidate":
            rows[sid].crosswalk_candidates = n
    for sid, n in _grouped(session, SearchAid.source_id).items():
        rows[sid].search_aids = n

    # K6.5: the declaration's library (or the declaration itself) is marked ai or mixed.
    ai_bindings = session.scalar(
        select(func.count())
        .select_from(Binding)
        .join(Mention, Binding.mention_id == Mention.id)
        .join(Source, Source.id == Mention.source_id)
        .where(Mention.authored.in_(AI_AUTHORED) | Source.authored.in_(AI_AUTHORED))
    )
    return CorpusReport(
        sources=list(rows.values()),
        systems=_systems(session),
        nodes=session.scalar(select(func.count()).select_from(Node)) or 0,
        nodes_by_selection={str(k): v for k, v in _grouped(session, Node.selected_by).items()},
        bindings=session.scalar(select(func.count()).select_from(Binding)) or 0,
        bindings_to_ai=ai_bindings or 0,
        bindings_generated=session.scalar(
            select(func.count()).select_from(Binding).where(Binding.mention_id.is_(None))
        )
        or 0,
        bindings_by_status={str(k): v for k, v in _grouped(session, Binding.status).items()},
        crosswalks=session.scalar(
            select(func.count()).select_from(Crosswalk).where(Crosswalk.status == "accepted")
        )
        or 0,
        text_by_licence={str(k): v for k, v in _grouped(session, TextRecord.licence).items()},
        text_by_author={str(k): v for k, v in _grouped(session, TextRecord.author_kind).items()},
    )


def _systems(session: Session) -> list[SystemRow]:
    """Mentions, nodes and crosswalks per system (K6.6)."""
    rows: dict[str, SystemRow] = {}

    def row(system: str) -> SystemRow:
        return rows.setdefault(system, SystemRow(system=system))

    for system, name in session.execute(
        select(Source.system, Source.name).join(Mention, Mention.source_id == Source.id).distinct()
    ):
        row(system).sources.append(name)
    active = Mention.status == "active"
    q = (
        select(Source.system, func.count(), func.count(func.distinct(Mention.node_id)))
        .join(Mention, Mention.source_id == Source.id)
        .where(active)
        .group_by(Source.system)
    )
    for system, n, nodes in session.execute(q):
        row(system).mentions_active, row(system).nodes = n, nodes
    q2 = select(
        Crosswalk.system, Crosswalk.status, Crosswalk.mention_id.is_not(None), func.count()
    ).group_by(Crosswalk.system, Crosswalk.status, Crosswalk.mention_id.is_not(None))
    for system, status, linked, n in session.execute(q2):
        r = row(system)
        if status == "accepted":
            r.crosswalks += n
            r.crosswalks_linked += n if linked else 0
        elif status == "candidate":
            r.crosswalk_candidates += n
    for r in rows.values():
        r.sources.sort()
    return sorted(rows.values(), key=lambda r: r.system)


# Columns that say when or in which order rows were written, not what the corpus holds.
_NOT_CONTENT = {"id", "created_at", "finished_at", "acquired_at", "heartbeat_at"}


def export_rows(session: Session) -> dict[str, list[str]]:
    """The corpus as sorted JSON lines per table, with natural keys in place of row ids, so
    that two stores holding the same corpus export byte for byte the same rows."""
    import json

    from math2.store.models import ConstDep, Pin

    sources = {s.id: s.name for s in session.scalars(select(Source))}
    pins = {p.id: f"{sources[p.source_id]}@{p.key}" for p in session.scalars(select(Pin))}
    nodes = {n.id: n.key for n in session.scalars(select(Node))}
    mentions = {
        m.id: f"{sources[m.source_id]}:{m.name}@{pins[m.pin_id]}"
        for m in session.execute(
            select(Mention.id, Mention.source_id, Mention.name, Mention.pin_id)
        )
    }
    refs = {
        "source_id": sources,
        "pin_id": pins,
        "retired_pin_id": pins,
        "node_id": nodes,
        "mention_id": mentions,
    }
    out: dict[str, list[str]] = {}
    for model in (Source, Pin, Node, Mention, Crosswalk, TextRecord, Binding, ConstDep):
        cols = [c.name for c in model.__table__.columns if c.name not in _NOT_CONTENT]
        rows = []
        for r in session.execute(select(*(model.__table__.c[c] for c in cols))):
            row = {
                c: refs[c].get(v, v) if c in refs and v is not None else v
                for c, v in zip(cols, r, strict=True)
            }
            rows.append(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str))
        out[model.__tablename__] = sorted(rows)
    return out
