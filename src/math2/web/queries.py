"""Read-only queries behind the pages: a node with everything about it, a library, a run."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from math2.store import (
    AgentText,
    Binding,
    CheckResultRow,
    Crosswalk,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Review,
    Source,
    TextRecord,
)


def model_names(s: Session, ids: set[int]) -> dict[int, str]:
    """`name@revision` of each model id."""
    if not ids:
        return {}
    rows = s.execute(select(ModelEntry).where(ModelEntry.id.in_(ids))).scalars()
    return {m.id: f"{m.name}@{m.revision}" if m.revision else m.name for m in rows}


def node_view(s: Session, node_id: int) -> dict[str, Any] | None:
    """A node with its texts, Lean statements, crosswalks, checks, reviews and pin history."""
    node = s.get(Node, node_id)
    if node is None:
        return None
    mentions = s.execute(
        select(Mention, Source.name, Pin.key)
        .join(Source, Source.id == Mention.source_id)
        .join(Pin, Pin.id == Mention.pin_id)
        .where(Mention.node_id == node_id)
        .order_by(Mention.pin_id, Mention.id)
    ).all()
    mention_ids = [m.id for m, _, _ in mentions]
    retired_keys = dict(
        s.execute(
            select(Pin.id, Pin.key).where(
                Pin.id.in_({m.retired_pin_id for m, _, _ in mentions if m.retired_pin_id})
            )
        ).all()
    )
    texts = (
        s.execute(
            select(TextRecord)
            .where((TextRecord.node_id == node_id) | TextRecord.mention_id.in_(mention_ids or [-1]))
            .order_by(TextRecord.id)
        )
        .scalars()
        .all()
    )
    agent = s.execute(select(AgentText).where(AgentText.node_id == node_id)).scalars().all()
    agent_ids = [a.id for a in agent]
    checks = (
        s.execute(
            select(CheckResultRow)
            .where(CheckResultRow.agent_text_id.in_(agent_ids))
            .order_by(CheckResultRow.agent_text_id, CheckResultRow.check)
        )
        .scalars()
        .all()
        if agent_ids
        else []
    )
    bindings = s.execute(
        select(Binding, Mention.name, Mention.statement)
        .outerjoin(Mention, Mention.id == Binding.mention_id)
        .where(Binding.node_id == node_id)
        .order_by(Binding.id)
    ).all()
    crosswalks = s.execute(
        select(Crosswalk, Source.name)
        .join(Source, Source.id == Crosswalk.source_id)
        .where(Crosswalk.node_id == node_id)
        .order_by(Crosswalk.system, Crosswalk.target)
    ).all()
    binding_ids = [b.id for b, _, _ in bindings]
    reviews = (
        s.execute(
            select(Review)
            .where(
                (Review.target_table == "agent_texts") & Review.target_id.in_(agent_ids or [-1])
                | (Review.target_table == "bindings") & Review.target_id.in_(binding_ids or [-1])
            )
            .order_by(Review.created_at)
        )
        .scalars()
        .all()
    )
    models = model_names(s, {t.model_id for t in texts if t.model_id} | {a.model_id for a in agent})
    sources = dict(s.execute(select(Source.id, Source.name)).all())
    shown = {m.id for m, _, _ in mentions if m.docstring}  # rendered once, under the mention
    texts = [t for t in texts if not (t.role == "docstring" and t.mention_id in shown)]
    return {
        "node": node,
        "mentions": [
            {
                "m": m,
                "source": src,
                "pin": pin,
                "retired_pin": retired_keys.get(m.retired_pin_id),
                "signature": lean_signature(m),
                "fields": structure_fields(s, m),
            }
            for m, src, pin in mentions
        ],
        "texts": [
            {
                "t": t,
                "model": models.get(t.model_id) if t.model_id else None,
                "source": sources.get(t.source_id) if t.source_id else None,
            }
            for t in texts
        ],
        "agent_texts": [{"a": a, "model": models.get(a.model_id)} for a in agent],
        "checks": checks,
        "bindings": [{"b": b, "name": n, "statement": st} for b, n, st in bindings],
        "crosswalks": [{"c": c, "source": src} for c, src in crosswalks],
        "reviews": reviews,
    }


def _library_counts(s: Session) -> dict[tuple[int, str], int]:
    counts: dict[tuple[int, str], int] = {}
    for source_id, status, n in s.execute(
        select(Mention.source_id, Mention.status, func.count()).group_by(
            Mention.source_id, Mention.status
        )
    ):
        counts[(source_id, status)] = n
    return counts


def _stamp(s: Session) -> tuple:
    """Changes when declarations are added, a pin is added (a bump, which is also what retires
    declarations) or a source is added."""
    return tuple(
        s.execute(
            select(
                select(func.max(Mention.id)).scalar_subquery(),
                select(func.max(Pin.id)).scalar_subquery(),
                select(func.count()).select_from(Source).scalar_subquery(),
            )
        ).one()
    )


def libraries(state: Any, s: Session) -> list[dict[str, Any]]:
    """Each source with its counts of active and retired mentions.

    Counting 300K declarations takes a while, so the counts are kept on `state` (the app's) and
    recounted when the store's declarations change: a new declaration, a new pin (a bump, which
    is also what retires declarations) or a new source changes the stamp."""
    stamp = _stamp(s)
    cached = getattr(state, "library_counts", None)
    if cached is None or cached[0] != stamp:
        cached = (stamp, _library_counts(s))
        state.library_counts = cached
    counts = cached[1]
    return [
        {
            "s": src,
            "active": counts.get((src.id, "active"), 0),
            "retired": counts.get((src.id, "retired"), 0),
        }
        for src in s.execute(select(Source).order_by(Source.name)).scalars()
    ]


def mentions_by_id(s: Session, ids: list[int]) -> dict[int, Mention]:
    """Declarations by id (the hits of a search)."""
    if not ids:
        return {}
    return {m.id: m for m in s.scalars(select(Mention).where(Mention.id.in_(ids)))}


_KEYWORDS = ("theorem", "lemma", "def", "abbrev", "structure", "class", "instance", "inductive",
             "axiom", "opaque", "noncomputable", "protected", "private", "@[")  # fmt: skip


def lean_signature(m: Mention) -> str | None:
    """The declaration's Lean signature: its statement as the library wrote it (`theorem
    name binders : type`), or, where only the type was recorded, `kind name : type`."""
    text = (m.statement or "").strip()
    if not text:
        return None
    if text.startswith(_KEYWORDS) or m.name in text.split(":", 1)[0]:
        return text
    kind = m.kind if m.kind in _KEYWORDS else None
    return f"{kind + ' ' if kind else ''}{m.name} : {text}"


def structure_fields(s: Session, m: Mention) -> list[tuple[str, str]]:
    """A structure's or class's fields (their own declarations `Owner.field`, kind `field`, at
    the same pin): (field name, its statement)."""
    if m.kind not in ("structure", "class"):
        return []
    rows = s.execute(
        select(Mention.name, Mention.statement)
        .where(
            Mention.source_id == m.source_id,
            Mention.pin_id == m.pin_id,
            Mention.kind == "field",
            Mention.name.startswith(m.name + ".", autoescape=True),
        )
        .order_by(Mention.id)
    ).all()
    return [(name.removeprefix(m.name + "."), st or "") for name, st in rows]


def declaration_view(s: Session, mention_id: int) -> dict[str, Any] | None:
    """One declaration of a library: statement, module, docstring, the pin it came in at (and
    the one that retired it), its node when it has one, and its texts."""
    row = s.execute(
        select(Mention, Source.name, Pin.key)
        .join(Source, Source.id == Mention.source_id)
        .join(Pin, Pin.id == Mention.pin_id)
        .where(Mention.id == mention_id)
    ).first()
    if row is None:
        return None
    m, source, pin = row
    retired = (
        s.scalar(select(Pin.key).where(Pin.id == m.retired_pin_id)) if m.retired_pin_id else None
    )
    node = s.get(Node, m.node_id) if m.node_id else None
    texts = [
        t
        for t in s.scalars(
            select(TextRecord).where(TextRecord.mention_id == mention_id).order_by(TextRecord.id)
        )
        if not (t.role == "docstring" and m.docstring)  # the page renders m.docstring once
    ]
    bound = s.execute(
        select(Binding, Node.key, Node.title)
        .join(Node, Node.id == Binding.node_id)
        .where(Binding.mention_id == mention_id)
        .order_by(Binding.id)
    ).all()
    return {
        "m": m,
        "source": source,
        "pin": pin,
        "retired_pin": retired,
        "node": node,
        "signature": lean_signature(m),
        "fields": structure_fields(s, m),
        "texts": texts,
        "bindings": [{"b": b, "key": key, "title": title} for b, key, title in bound],
    }


def _pin_counts(s: Session, src: Source) -> tuple[list[dict[str, Any]], int, int]:
    def count(*where) -> int:
        return s.scalar(select(func.count()).select_from(Mention).where(*where)) or 0

    pins = [
        {
            "p": pin,
            "added": count(Mention.pin_id == pin.id),
            "retired": count(Mention.retired_pin_id == pin.id),
            "renamed": count(Mention.retired_pin_id == pin.id, Mention.successor.is_not(None)),
        }
        for pin in src.pins
    ]
    active = count(Mention.source_id == src.id, Mention.status == "active")
    return pins, active, count(Mention.source_id == src.id, Mention.status == "retired")


def library_view(s: Session, name: str, state: Any = None) -> dict[str, Any] | None:
    """Counts of a library and its bump history: per pin, declarations added and retired.

    With `state` (the app's), the declaration counts are kept until the store's declarations
    change (the stamp of `libraries`); levels, texts and crosswalks are counted each time."""
    src = s.scalar(select(Source).where(Source.name == name))
    if src is None:
        return None
    cache = getattr(state, "pin_counts", None) if state is not None else None
    stamp = _stamp(s) if state is not None else None
    hit = cache.get(src.id) if cache is not None else None
    if hit is not None and hit[0] == stamp:
        pins, active, retired = hit[1]
    else:
        pins, active, retired = _pin_counts(s, src)
        if state is not None:
            if cache is None:
                cache = state.pin_counts = {}
            cache[src.id] = (stamp, (pins, active, retired))
    # From the nodes' side (thousands) through the index on mentions.node_id, not from the
    # library's hundreds of thousands of declarations.
    has_mention = (
        select(Mention.id).where(Mention.node_id == Node.id, Mention.source_id == src.id).exists()
    )
    levels = dict(
        s.execute(select(Node.level, func.count()).where(has_mention).group_by(Node.level)).all()
    )
    return {
        "s": src,
        "active": active,
        "retired": retired,
        "texts": s.scalar(
            select(func.count()).select_from(TextRecord).where(TextRecord.source_id == src.id)
        )
        or 0,
        "crosswalks": s.scalar(
            select(func.count()).select_from(Crosswalk).where(Crosswalk.source_id == src.id)
        )
        or 0,
        "levels": dict(sorted(levels.items())),
        "pins": pins,
    }
