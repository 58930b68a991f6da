"""The review queue: what waits for a person, a page at a time and by kind.

Agent text waiting for a person (`pending`) and open bindings (`proposed`, `checked`,
`check_failed`), each in id order, `PAGE` at a time: a page ends at an id and the next one starts
after it (keyset, through the indexes of migration 0010), so a page costs the same at the first
item as at the ten-thousandth. Counts per kind come from the status indexes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from math2.roles.align.bindings import DefinitionToReview, definitions_to_review
from math2.roles.align.lifecycle import OPEN as OPEN_BINDING
from math2.store import AgentText, AgentTextKind, Binding, CheckResultRow, Mention, Node, Source
from math2.store.models import AI_AUTHORED
from math2.web.queries import model_names

PAGE = 25
AGENT_TEXT = "agent-text"  # every kind of agent text
BINDING = "binding"
# What `/review?kind=` may name: all agent text, one kind of it, or bindings.
KINDS = (AGENT_TEXT, *(k.value for k in AgentTextKind), BINDING)
_OPEN = [s.value for s in OPEN_BINDING]


@dataclass
class QueuePage:
    """One page of the queue: `kind` None shows the first page of agent text and of bindings."""

    kind: str | None
    after: int | None
    counts: dict[str, int]  # waiting per agent text kind, and `binding`
    agent_texts: list[dict[str, Any]] = field(default_factory=list)
    bindings: list[dict[str, Any]] = field(default_factory=list)
    agent_next: int | None = None  # the `after` of the next page of agent text
    binding_next: int | None = None

    @property
    def agent_total(self) -> str:
        """How many agent texts wait (of the kind shown, or of every kind), `N+` when a count
        reached `COUNT_CAP`."""
        if self.kind in KINDS and self.kind not in (AGENT_TEXT, BINDING):
            return self.label(self.kind or "")
        keys = [k for k in self.counts if k != BINDING]
        total = sum(self.counts[k] for k in keys)
        return f"{total:,}+" if any(self.counts[k] >= COUNT_CAP for k in keys) else f"{total:,}"

    @property
    def binding_total(self) -> str:
        """How many bindings wait (`N+` past `COUNT_CAP`)."""
        return self.label(BINDING)

    def label(self, key: str) -> str:
        """One count as shown: `1,000+` once it reached `COUNT_CAP`."""
        n = self.counts.get(key, 0)
        return f"{COUNT_CAP:,}+" if n >= COUNT_CAP else f"{n:,}"


# The queue's counts stop at this many (`1,000+`): each is one index range read of at most
# COUNT_CAP rows, so a page's cost does not grow with the queue.
COUNT_CAP = 1000


def _capped(stmt: Select[Any]) -> Select[Any]:
    return select(func.count()).select_from(stmt.limit(COUNT_CAP).subquery())


def counts(s: Session) -> dict[str, int]:
    """How many items wait, per agent text kind and for bindings (kinds with none left out),
    each counted up to `COUNT_CAP` (over the (status, kind, id) and (status, id) indexes)."""
    out: dict[str, int] = {}
    for kind in AgentTextKind:
        rows = select(AgentText.id).where(
            AgentText.status == "pending", AgentText.kind == kind.value
        )
        if n := s.scalar(_capped(rows)):
            out[kind.value] = int(n)
    rows = select(Binding.id).where(Binding.status.in_(_OPEN))
    if n := s.scalar(_capped(rows)):
        out[BINDING] = int(n)
    return out


def _agent_rows(s: Session, ids: list[int] | None, where: list[Any], limit: int) -> list[Any]:
    q = select(AgentText, Node.key, Node.title, Node.level).outerjoin(
        Node, Node.id == AgentText.node_id
    )
    if ids is not None:
        q = q.where(AgentText.id.in_(ids))
    return list(s.execute(q.where(*where).order_by(AgentText.id).limit(limit)).all())


def _agent_items(s: Session, rows: list[Any]) -> list[dict[str, Any]]:
    models = model_names(s, {a.model_id for a, *_ in rows})
    checks: dict[int, list[CheckResultRow]] = {}
    ids = [a.id for a, *_ in rows]
    if ids:
        for c in s.scalars(select(CheckResultRow).where(CheckResultRow.agent_text_id.in_(ids))):
            if c.agent_text_id is not None:
                checks.setdefault(c.agent_text_id, []).append(c)
    return [
        {
            "a": a,
            "node_key": key,
            "node_title": title,
            "level": level,
            "model": models.get(a.model_id),
            "checks": checks.get(a.id, []),
        }
        for a, key, title, level in rows
    ]


def _binding_rows(s: Session, ids: list[int] | None, where: list[Any], limit: int) -> list[Any]:
    q = (
        select(Binding, Node.key, Node.title, Node.level, Mention.name, Mention.statement)
        .join(Node, Node.id == Binding.node_id)
        .outerjoin(Mention, Mention.id == Binding.mention_id)  # none: a model's statement
    )
    if ids is not None:
        q = q.where(Binding.id.in_(ids))
    return list(s.execute(q.where(*where).order_by(Binding.id).limit(limit)).all())


def _open_binding_ids(s: Session, where: list[Any], limit: int) -> list[int]:
    """The first `limit` open bindings' ids: one index range per open status (status, id),
    merged, so no page sorts every open binding."""
    ids: list[int] = []
    for status in _OPEN:
        ids.extend(
            s.scalars(
                select(Binding.id)
                .where(Binding.status == status, *where)
                .order_by(Binding.id)
                .limit(limit)
            )
        )
    return sorted(ids)[:limit]


def _ai_bound(s: Session, ids: list[int]) -> set[int]:
    """Which of these bindings name a declaration of an AI-written library (K6.5): only their
    definitions are looked up."""
    if not ids:
        return set()
    return set(
        s.scalars(
            select(Binding.id)
            .join(Mention, Mention.id == Binding.mention_id)
            .join(Source, Source.id == Mention.source_id)
            .where(
                Binding.id.in_(ids),
                or_(Mention.authored.in_(AI_AUTHORED), Source.authored.in_(AI_AUTHORED)),
            )
        )
    )


def _binding_items(s: Session, rows: list[Any]) -> list[dict[str, Any]]:
    ai = _ai_bound(s, [b.id for b, *_ in rows])
    defs: dict[int, list[DefinitionToReview]] = {i: definitions_to_review(s, i) for i in ai}
    return [
        {
            "b": b,
            "node_key": key,
            "node_title": title,
            "level": level,
            "name": n,
            "stmt": st,
            "ai_defs": defs.get(b.id, []),
        }
        for b, key, title, level, n, st in rows
    ]


def _page(rows: list[Any], limit: int) -> tuple[list[Any], int | None]:
    """The first `limit` rows, and the `after` of the next page (None: this is the last)."""
    if len(rows) > limit:
        rows = rows[:limit]
        return rows, rows[-1][0].id
    return rows, None


def review_queue(
    s: Session,
    kind: str | None = None,
    after: int | None = None,
    limit: int = PAGE,
    skip: tuple[str, int] | None = None,
) -> QueuePage:
    """A page of the queue. `kind` (one of `KINDS`) shows that kind alone, from `after` on;
    None shows the first page of each. `skip` (kind, id) leaves out an item the page shows
    elsewhere (a refused decision, shown at the top)."""
    page = QueuePage(kind=kind, after=after, counts=counts(s))

    def window(id_col: Any, which: str) -> list[Any]:
        """The page's bounds on the ids of one kind: after `after`, without the skipped one."""
        out = []
        if after is not None and kind is not None:
            out.append(id_col > after)
        if skip is not None and skip[0] == which:
            out.append(id_col != skip[1])
        return out

    if kind != BINDING:
        where: list[Any] = [AgentText.status == "pending", *window(AgentText.id, AGENT_TEXT)]
        if kind not in (None, AGENT_TEXT):
            where.append(AgentText.kind == kind)
        rows, page.agent_next = _page(_agent_rows(s, None, where, limit + 1), limit)
        page.agent_texts = _agent_items(s, rows)
    if kind in (None, BINDING):
        ids = _open_binding_ids(s, window(Binding.id, BINDING), limit + 1)
        rows, page.binding_next = _page(_binding_rows(s, ids, [], limit + 1), limit)
        page.bindings = _binding_items(s, rows)
    return page


def queue_item(s: Session, kind: str, item_id: int) -> dict[str, Any] | None:
    """One item of the queue, whatever its status now (a refused decision's item, which another
    reviewer may have decided meanwhile); None when there is no such item."""
    if kind == AGENT_TEXT:
        agent = _agent_items(s, _agent_rows(s, [item_id], [], 1))
        return agent[0] if agent else None
    binding = _binding_items(s, _binding_rows(s, [item_id], [], 1))
    return binding[0] if binding else None
