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


def propose_from_crosswalks(s: Session, source: str | None = None) -> int:
    """A proposed binding (origin `crosswalk`) for each accepted same_as edge that names a Lean
    declaration of the store (a list's Lean entry, a library's own link) and is not a binding
    yet; `source` limits it to the edges one source gave. Returns how many were new."""
    from math2.store.models import Crosswalk, Mention, Source

    q = (
        select(Crosswalk.node_id, Crosswalk.mention_id)
        .join(Mention, Mention.id == Crosswalk.mention_id)
        .join(Source, Source.id == Mention.source_id)
        .where(
            Crosswalk.status == "accepted",
            Crosswalk.relation == "same_as",
            Source.system == "lean4",
            Mention.status == "active",
        )
        .order_by(Crosswalk.id)
    )
    if source is not None:
        q = q.where(Crosswalk.source_id.in_(select(Source.id).where(Source.name == source)))
    bound = {(n, m) for n, m in s.execute(select(Binding.node_id, Binding.mention_id))}
    new = 0
    for node_id, mention_id in s.execute(q):
        if (node_id, mention_id) in bound:
            continue
        propose_binding(s, node_id, BindingOrigin.CROSSWALK, mention_id=mention_id)
        bound.add((node_id, mention_id))
        new += 1
    return new
