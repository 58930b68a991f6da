"""Undoing what an import wrote at a pin (`--force`, a newer reader), or reopening it for a
writer that diffs against its rows (`lean_write.write_library`); refused where a person bound
one of its mentions."""

from __future__ import annotations

from sqlalchemy import delete, func, select, union, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import CompoundSelect

from math2.errors import Math2Error
from math2.store.models import (
    Binding,
    Crosswalk,
    Mention,
    Node,
    NotationRecord,
    Pin,
    SearchAid,
    Source,
    TextRecord,
)
from math2.store.work import Run, RunItem


class ImportConflict(Math2Error):
    """The data at hand is not the data already imported at this pin."""


def _rows(result: object) -> int:
    """The rows a DELETE or UPDATE touched."""
    return int(getattr(result, "rowcount", 0))


def reopen_pin(session: Session, src: Source, pin: Pin) -> None:
    """Make the import of `src` at `pin` ready to be written again over its rows, which stay
    (the writer diffs against them): its notation rows go, its run is running again."""
    session.execute(
        delete(NotationRecord).where(
            NotationRecord.source_id == src.id, NotationRecord.pin_id == pin.id
        )
    )
    runs = select(Run.id).where(Run.job == "import", Run.key == f"{src.name}@{pin.key}")
    session.execute(delete(RunItem).where(RunItem.run_id.in_(runs)))
    session.execute(update(Run).where(Run.id.in_(runs)).values(status="running"))
    session.flush()


def clear_pin(session: Session, src: Source, pin: Pin) -> dict[str, int]:
    """Undo what the import of `src` at `pin` wrote, inside the caller's transaction: its
    mentions (and their texts and dependencies), the retirements it made, its crosswalk edges,
    the nodes only it made, and its run rows. Refused when a person bound one of its mentions."""
    mention_ids = select(Mention.id).where(Mention.source_id == src.id, Mention.pin_id == pin.id)
    bound = session.scalar(
        select(func.count()).select_from(Binding).where(Binding.mention_id.in_(mention_ids))
    )
    if bound:
        raise ImportConflict(
            f"{src.name}@{pin.key}: {bound} binding(s) a person made point at mentions of this "
            "import; replacing it would drop them. Record a new pin and bump instead"
        )
    counts: dict[str, int] = {}
    counts["mentions removed"] = _rows(
        session.execute(
            delete(Mention).where(Mention.source_id == src.id, Mention.pin_id == pin.id)
        )
    )
    session.execute(
        update(Mention)
        .where(Mention.source_id == src.id, Mention.retired_pin_id == pin.id)
        .values(status="active", retired_pin_id=None, successor=None)
    )
    session.execute(
        delete(TextRecord).where(TextRecord.source_id == src.id, TextRecord.pin_id == pin.id)
    )
    aids = session.execute(
        delete(SearchAid).where(SearchAid.source_id == src.id, SearchAid.pin_id == pin.id)
    )
    counts["search aids removed"] = _rows(aids)
    session.execute(
        delete(NotationRecord).where(
            NotationRecord.source_id == src.id, NotationRecord.pin_id == pin.id
        )
    )
    counts["edges removed"] = _rows(
        session.execute(delete(Crosswalk).where(Crosswalk.source_id == src.id))
    )
    for node in session.scalars(select(Node)).all():
        lists = (node.extra or {}).get("lists", {})
        if src.name in lists:
            extra = dict(node.extra)
            extra["lists"] = {k: v for k, v in lists.items() if k != src.name}
            if not extra["lists"]:
                del extra["lists"]
            node.extra = extra
    session.flush()
    used: CompoundSelect[int | None] = union(
        select(Mention.node_id).where(Mention.node_id.is_not(None)),
        select(Crosswalk.node_id),
        select(Binding.node_id),
        select(TextRecord.node_id).where(TextRecord.node_id.is_not(None)),
    )
    counts["nodes removed"] = _rows(
        session.execute(delete(Node).where(Node.id.not_in(used), Node.selected_by == src.name))
    )
    session.execute(delete(Node).where(Node.id.not_in(used), Node.key.like(f"decl:{src.name}:%")))
    # the import's run is done again by this import: its items written again, in this
    # transaction (a failure rolls it back with everything else)
    runs = select(Run.id).where(Run.job == "import", Run.key == f"{src.name}@{pin.key}")
    session.execute(delete(RunItem).where(RunItem.run_id.in_(runs)))
    session.execute(update(Run).where(Run.id.in_(runs)).values(status="running"))
    session.execute(delete(Run).where(Run.job == "bump", Run.key == f"{src.name}@{pin.key}"))
    session.flush()
    return counts
