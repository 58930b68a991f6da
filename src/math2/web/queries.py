"""Read-only queries behind the pages: a node with everything about it, a library, a run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from math2.roles.align.bindings import definitions_to_review
from math2.store import (
    AgentText,
    Attempt,
    Binding,
    CheckResultRow,
    Crosswalk,
    ItemStatus,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Review,
    Run,
    RunItem,
    Source,
    TextRecord,
)

PASS_VERDICTS = frozenset({"pass", "passed", "accepted"})


def _pass_round(item: str, result: Any, first_pass: dict[str, int]) -> int | None:
    if isinstance(result, dict) and "passed_round" in result:
        r = result["passed_round"]
        return r if isinstance(r, int) and not isinstance(r, bool) else None
    return first_pass.get(item)


def _models(s: Session, ids: set[int]) -> dict[int, str]:
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
        .join(Mention, Mention.id == Binding.mention_id)
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
    models = _models(s, {t.model_id for t in texts if t.model_id} | {a.model_id for a in agent})
    sources = dict(s.execute(select(Source.id, Source.name)).all())
    return {
        "node": node,
        "mentions": [
            {
                "m": m,
                "source": src,
                "pin": pin,
                "retired_pin": retired_keys.get(m.retired_pin_id),
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


def libraries(s: Session) -> list[dict[str, Any]]:
    """Each source with its counts of active and retired mentions."""
    counts = Counter()
    for source_id, status, n in s.execute(
        select(Mention.source_id, Mention.status, func.count()).group_by(
            Mention.source_id, Mention.status
        )
    ):
        counts[(source_id, status)] = n
    return [
        {
            "s": src,
            "active": counts[(src.id, "active")],
            "retired": counts[(src.id, "retired")],
        }
        for src in s.execute(select(Source).order_by(Source.name)).scalars()
    ]


def library_view(s: Session, name: str) -> dict[str, Any] | None:
    """Counts of a library and its bump history: per pin, declarations added and retired."""
    src = s.scalar(select(Source).where(Source.name == name))
    if src is None:
        return None

    def count(*where) -> int:
        return s.scalar(select(func.count()).select_from(Mention).where(*where)) or 0

    pins = []
    for pin in src.pins:
        pins.append(
            {
                "p": pin,
                "added": count(Mention.pin_id == pin.id),
                "retired": count(Mention.retired_pin_id == pin.id),
                "renamed": count(Mention.retired_pin_id == pin.id, Mention.successor.is_not(None)),
            }
        )
    node_ids = select(Mention.node_id).where(
        Mention.source_id == src.id, Mention.node_id.is_not(None)
    )
    levels = dict(
        s.execute(
            select(Node.level, func.count()).where(Node.id.in_(node_ids)).group_by(Node.level)
        ).all()
    )
    return {
        "s": src,
        "active": count(Mention.source_id == src.id, Mention.status == "active"),
        "retired": count(Mention.source_id == src.id, Mention.status == "retired"),
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


def runs(s: Session, limit: int = 200) -> list[Run]:
    """The newest runs."""
    return list(s.execute(select(Run).order_by(Run.id.desc()).limit(limit)).scalars())


def run_view(s: Session, run_id: int, items_shown: int = 500) -> dict[str, Any] | None:
    """Progress, per-state counts, pass-round distribution and the items of one run.

    The pass round of an item is the `passed_round` its role wrote into the item's result (the
    formalize role does); for a job that does not, the smallest `round` of its attempts with a
    passing verdict (pass/passed/accepted). Finished items that never passed count as `never`,
    pending or running ones as `not yet`.
    """
    run = s.get(Run, run_id)
    if run is None:
        return None
    states = dict(
        s.execute(
            select(RunItem.status, func.count())
            .where(RunItem.run_id == run_id)
            .group_by(RunItem.status)
        ).all()
    )
    stages = dict(
        s.execute(
            select(RunItem.stage, func.count())
            .where(RunItem.run_id == run_id, RunItem.stage.is_not(None))
            .group_by(RunItem.stage)
        ).all()
    )
    total = sum(states.values())
    first_pass = dict(
        s.execute(
            select(Attempt.item, func.min(Attempt.round))
            .where(Attempt.run_id == run_id, func.lower(Attempt.verdict).in_(PASS_VERDICTS))
            .group_by(Attempt.item)
        ).all()
    )
    # Plain columns for the distribution (a run has up to millions of items); full rows only
    # for the items shown.
    rounds: Counter[str] = Counter()
    pass_round: dict[str, int | None] = {}
    for item, status, result in s.execute(
        select(RunItem.item, RunItem.status, RunItem.result).where(RunItem.run_id == run_id)
    ):
        r = _pass_round(item, result, first_pass)
        pass_round[item] = r
        if r is not None:
            rounds[str(r)] += 1
        else:
            unfinished = status in (ItemStatus.PENDING.value, ItemStatus.RUNNING.value)
            rounds["not yet" if unfinished else "never"] += 1
    items = (
        s.execute(
            select(RunItem)
            .where(RunItem.run_id == run_id)
            .order_by(RunItem.item)
            .limit(items_shown)
        )
        .scalars()
        .all()
    )
    ordered = sorted((k for k in rounds if k.isdigit()), key=int)
    distribution = [(k, rounds[k]) for k in [*ordered, "never", "not yet"] if rounds[k]]
    tokens = s.execute(
        select(func.count(), func.sum(Attempt.tokens_in), func.sum(Attempt.tokens_out)).where(
            Attempt.run_id == run_id
        )
    ).one()
    return {
        "run": run,
        "total": total,
        "done": states.get("done", 0),
        "states": dict(sorted(states.items())),
        "stages": dict(sorted(stages.items())),
        "rounds": distribution,
        "max_round": max((n for _, n in distribution), default=0),
        "items": [{"it": it, "pass_round": pass_round.get(it.item)} for it in items],
        "attempts": tokens[0] or 0,
        "tokens_in": tokens[1] or 0,
        "tokens_out": tokens[2] or 0,
    }


def trajectory(s: Session, run_id: int, item: str) -> list[Attempt]:
    """Every attempt of one item, in order."""
    return list(
        s.execute(
            select(Attempt)
            .where(Attempt.run_id == run_id, Attempt.item == item)
            .order_by(Attempt.round, Attempt.stage, Attempt.sample, Attempt.id)
        ).scalars()
    )


def review_queue(s: Session, limit: int = 100) -> dict[str, Any]:
    """Agent text waiting for a person, and proposed bindings: the oldest `limit` of each, and
    how many wait in all."""
    agent = s.execute(
        select(AgentText, Node.key, Node.title, Node.level)
        .outerjoin(Node, Node.id == AgentText.node_id)
        .where(AgentText.status == "pending")
        .order_by(AgentText.id)
        .limit(limit)
    ).all()
    agent_total = s.scalar(
        select(func.count()).select_from(AgentText).where(AgentText.status == "pending")
    )
    binding_total = s.scalar(
        select(func.count()).select_from(Binding).where(Binding.status == "proposed")
    )
    models = _models(s, {a.model_id for a, *_ in agent})
    checks: dict[int, list[CheckResultRow]] = {}
    ids = [a.id for a, *_ in agent]
    if ids:
        for c in s.execute(
            select(CheckResultRow).where(CheckResultRow.agent_text_id.in_(ids))
        ).scalars():
            checks.setdefault(c.agent_text_id, []).append(c)
    bindings = s.execute(
        select(Binding, Node.key, Node.title, Node.level, Mention.name, Mention.statement)
        .join(Node, Node.id == Binding.node_id)
        .join(Mention, Mention.id == Binding.mention_id)
        .where(Binding.status == "proposed")
        .order_by(Binding.id)
        .limit(limit)
    ).all()
    return {
        "agent_total": agent_total or 0,
        "binding_total": binding_total or 0,
        "agent_texts": [
            {
                "a": a,
                "node_key": key,
                "node_title": title,
                "level": level,
                "model": models.get(a.model_id),
                "checks": checks.get(a.id, []),
            }
            for a, key, title, level in agent
        ],
        "bindings": [
            {
                "b": b,
                "node_key": key,
                "node_title": title,
                "level": level,
                "name": n,
                "stmt": st,
                "ai_defs": definitions_to_review(s, b.id),  # K6.5
            }
            for b, key, title, level, n, st in bindings
        ],
    }
