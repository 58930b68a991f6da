"""The binding review page: one binding with its Lean side, its Lean check and (K6.5) each
definition of an AI-written library its statement uses, which a reviewer confirms first."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session

from math2.roles.align.bindings import definitions_to_review
from math2.roles.align.lifecycle import OPEN, can_confirm
from math2.store import AgentText, Binding, Mention, Node, Source
from math2.web.app import Router, RowId, page
from math2.web.security import current_reviewer

router = Router()


def binding_detail(s: Session, binding_id: int) -> dict[str, Any] | None:
    """Everything the binding page shows (None: no such binding)."""
    b = s.get(Binding, binding_id)
    if b is None:
        return None
    node = s.get(Node, b.node_id)
    m = s.get(Mention, b.mention_id) if b.mention_id is not None else None
    text = s.get(AgentText, b.agent_text_id) if b.agent_text_id is not None else None
    defs = definitions_to_review(s, b.id)
    why = can_confirm(b)
    if why is None and (missing := [d.name for d in defs if not d.confirmed]):
        why = f"confirm each definition first ({', '.join(missing)})"
    return {
        "b": b,
        "node": node,
        "mention": m,
        "library": s.get(Source, m.source_id) if m is not None else None,
        "agent_text": text,
        "check": b.lean_check or {},
        "is_open": b.status in OPEN,
        "blocked": why,  # why Confirm is off (None: it is on)
        "x": {"b": b, "ai_defs": defs},  # what _ai_definitions.html reads
    }


@router.get("/review/binding/{binding_id}")
def binding_page(request: Request, binding_id: RowId) -> Response:
    if current_reviewer(request) is None:
        return RedirectResponse(f"/login?next=/review/binding/{binding_id}", status_code=303)
    with request.app.state.store.session() as s:
        detail = binding_detail(s, binding_id)
    if detail is None:
        raise HTTPException(404, f"binding {binding_id} does not exist")
    return page(request, "binding.html", **detail)
