"""A binding's lifecycle: proposed (by formalize, align or a crosswalk) → checked or check_failed
(Lean, `check.py`) → confirmed or rejected by a person in the review queue.

`propose_binding` is the one way a role proposes one (idempotent: a second proposal of the same
Lean side for the same node returns the first row). Only a `checked` binding can be confirmed;
rejecting is possible at every stage before a person's decision.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.store.models import Binding, BindingOrigin, BindingStatus

# Bindings a person can still decide on (shown in the review queue).
OPEN = (BindingStatus.PROPOSED, BindingStatus.CHECKED, BindingStatus.CHECK_FAILED)
# Bindings the check stage takes (a failed check is checked again: the build may have changed).
TO_CHECK = (BindingStatus.PROPOSED, BindingStatus.CHECK_FAILED)


def propose_binding(
    s: Session,
    node_id: int,
    origin: BindingOrigin,
    *,
    mention_id: int | None = None,
    agent_text_id: int | None = None,
    attempt_id: int | None = None,
) -> Binding:
    """A proposed binding of the node to a library declaration or to a model-written statement."""
    if (mention_id is None) == (agent_text_id is None):
        raise ValueError("a binding names exactly one Lean side: a mention or an agent text")
    q = select(Binding).where(Binding.node_id == node_id)
    q = (
        q.where(Binding.mention_id == mention_id)
        if mention_id is not None
        else q.where(Binding.agent_text_id == agent_text_id)
    )
    existing = s.scalar(q)
    if existing is not None:
        return existing
    b = Binding(
        node_id=node_id,
        mention_id=mention_id,
        agent_text_id=agent_text_id,
        status=BindingStatus.PROPOSED.value,
        origin=origin.value,
        attempt_id=attempt_id,
        lean_check={},
    )
    s.add(b)
    s.flush()
    return b


def can_confirm(b: Binding) -> str | None:
    """Why this binding cannot be confirmed yet (None: it can)."""
    if b.status == BindingStatus.CHECKED.value:
        return None
    if b.status == BindingStatus.PROPOSED.value:
        return "it has not been checked by Lean yet (run `math2 bindings check`)"
    if b.status == BindingStatus.CHECK_FAILED.value:
        reason = (b.lean_check or {}).get("reason") or "see its check"
        return f"its Lean check failed: {reason}"
    return f"it was already decided ({b.status})"
