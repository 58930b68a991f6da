"""Writing what a role produced as agent text: once per run, item and kind, with provenance."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.llm.templates import Template
from math2.store.work import AgentText, AgentTextKind


def record_agent_text(
    s: Session,
    *,
    kind: AgentTextKind,
    run_id: int,
    item: str,
    body: str,
    source_text: str | None,
    template: Template,
    model_id: int,
    attempt_id: int | None,
    mention_id: int | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[int, bool]:
    """(the row's id, whether it was written now): a resumed run finds the row it wrote before.

    The text waits for a person (status `pending`); it names the model, the template's id and
    hash, the run and the attempt that wrote it.
    """
    existing = s.scalar(
        select(AgentText.id).where(
            AgentText.run_id == run_id, AgentText.item == item, AgentText.kind == kind
        )
    )
    if existing is not None:
        return existing, False
    row = AgentText(
        kind=kind,
        body=body,
        source_text=source_text,
        mention_id=mention_id,
        item=item,
        run_id=run_id,
        attempt_id=attempt_id,
        model_id=model_id,
        template_id=template.ref,
        template_hash=template.hash,
        extra=extra or {},
    )
    s.add(row)
    s.flush()
    return row.id, True
