"""A person's decisions on agent text and proposed bindings, and the node level they may raise.

Every decision writes one `reviews` row (reviewer, time, verdict, reason). Agent text becomes node
text only here: confirming (or editing) an informal or formal statement writes a `TextRecord`
with `author_kind = 'agent'`, the model and `prompt_hash = template_hash`. A node's level changes
only through `decide_*`, by the rule of `level_for` (docs/web.md):

- W0: the node exists.
- W1: it has an informal statement text (a person's, or agent text a person confirmed).
- W2: W1, and a person confirmed its Lean side (a confirmed binding, or a confirmed formal
  statement text).
- W3: W2, and no agent text of the node is still waiting for a person, and at least one of its
  texts or bindings was confirmed by a person (a `reviews` row with verdict `confirmed`).

The level never goes down through a review: `new = max(old, level_for(node))`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

if TYPE_CHECKING:
    from sqlalchemy.engine import CursorResult

from math2.errors import Math2Error
from math2.store import (
    AgentText,
    AgentTextKind,
    Binding,
    BindingStatus,
    ModelEntry,
    Node,
    Review,
    ReviewStatus,
    TextRecord,
)

# Agent text a person confirmed is released without rights reserved: machine-written text carries
# no author's copyright, and the attribution names the model, template and reviewer.
AGENT_TEXT_LICENCE = "CC0-1.0"
LEVELS = ("W0", "W1", "W2", "W3")
# What kind of agent text becomes which node text; other kinds (descriptions, augmentations,
# reasoning) are search aids or training data, never node text (K06): a review only marks them.
NODE_TEXT_ROLE = {
    AgentTextKind.INFORMAL_STATEMENT.value: ("statement", "prose"),
    AgentTextKind.FORMAL_STATEMENT.value: ("formal_statement", "formal"),
}


class Decision(StrEnum):
    """What a reviewer can do with one item of the queue."""

    CONFIRM = "confirm"
    REJECT = "reject"
    EDIT = "edit"


class ReviewError(Math2Error):
    """A decision that cannot be applied (item gone, already decided, bad input)."""


class NotFound(ReviewError):
    """The item the decision names does not exist (404)."""


class AlreadyDecided(ReviewError):
    """Another decision on the item came first (a person's, or a Lean check's status change):
    this one wrote nothing."""


def level_for(s: Session, node_id: int) -> str:
    """The level a node's reviewed content supports (the rule in this module's docstring)."""
    texts = s.execute(select(TextRecord.role).where(TextRecord.node_id == node_id)).scalars().all()
    if "statement" not in texts:
        return "W0"
    confirmed_binding = s.scalar(
        select(func.count())
        .select_from(Binding)
        .where(Binding.node_id == node_id, Binding.status == "confirmed")
    )
    if not confirmed_binding and "formal_statement" not in texts:
        return "W1"
    pending = s.scalar(
        select(func.count())
        .select_from(AgentText)
        .where(AgentText.node_id == node_id, AgentText.status == ReviewStatus.PENDING.value)
    )
    agent_ids = select(AgentText.id).where(AgentText.node_id == node_id)
    binding_ids = select(Binding.id).where(Binding.node_id == node_id)
    confirmed = s.scalar(
        select(func.count())
        .select_from(Review)
        .where(
            Review.verdict == "confirmed",
            (
                (Review.target_table == "agent_texts") & Review.target_id.in_(agent_ids)
                | (Review.target_table == "bindings") & Review.target_id.in_(binding_ids)
            ),
        )
    )
    return "W3" if not pending and confirmed else "W2"


def _lock_node(s: Session, node_id: int | None) -> Node | None:
    """The node row, locked until the transaction ends (PostgreSQL; on SQLite the decision's
    first write already holds the database's write lock): decisions on one node's items raise
    its level one after another, each seeing the other's texts and bindings."""
    if node_id is None:
        return None
    return s.scalars(
        select(Node).where(Node.id == node_id).with_for_update(key_share=True)
    ).one_or_none()


def _raise_level(s: Session, node: Node | None) -> None:
    if node is None:
        return
    s.flush()
    new = level_for(s, node.id)
    old = node.level if node.level in LEVELS else "W0"
    if LEVELS.index(new) > LEVELS.index(old):
        node.level = new


def _reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise ReviewError("a decision needs a reason")
    return reason


def _claim(s: Session, model: type[AgentText] | type[Binding], item_id: int,
           open_statuses: tuple[str, ...], new_status: str) -> bool:  # fmt: skip
    """The decision's one conditional write: the item moves from an open status to
    `new_status` only if it is still open, and this is the first write of the decision. True
    when this transaction won the item; a racing decision on PostgreSQL waits for the row lock,
    then finds the status changed and updates nothing; on SQLite the UPDATE takes the
    database's write lock, so the second one reads the first one's status."""
    result = cast(
        "CursorResult[Any]",
        s.execute(
            update(model)
            .where(model.id == item_id, model.status.in_(open_statuses))
            .values(status=new_status)
            .execution_options(synchronize_session=False)
        ),
    )
    return result.rowcount == 1


def _already(s: Session, what: str, status: str, review_id: int | None) -> AlreadyDecided:
    who = s.get(Review, review_id) if review_id is not None else None
    by = f" by {who.reviewer}" if who is not None else ""
    return AlreadyDecided(f"{what} was already decided ({status}{by}) before this decision")


def _edited(edited_body: str | None) -> str | None:
    # Browsers send a textarea's line ends as CRLF.
    return edited_body.replace("\r\n", "\n").strip() if edited_body is not None else None


def decide_agent_text(
    s: Session,
    agent_text_id: int,
    decision: Decision,
    reviewer: str,
    reason: str,
    edited_body: str | None = None,
) -> Review:
    """Confirm, reject or edit one pending agent text; returns the review written.

    Everything that can refuse the decision is checked before its one conditional write
    (`_claim`); a decision that loses a race to another raises `AlreadyDecided` having written
    nothing, and only the winner writes the review, the node text and the level."""
    reason = _reason(reason)
    row = s.get(AgentText, agent_text_id)
    if row is None:
        raise NotFound(f"agent text {agent_text_id} does not exist")
    what = f"agent text {agent_text_id}"
    if row.status != ReviewStatus.PENDING.value:
        raise _already(s, what, row.status, row.review_id)
    body = row.body
    edited = _edited(edited_body)
    if decision is Decision.EDIT:
        if not edited:
            raise ReviewError("an edit needs the new text")
        if edited == row.body.strip():
            raise ReviewError("the edit does not change the text: confirm it instead")
        body = edited
    elif decision is Decision.CONFIRM and edited is not None and edited != row.body.strip():
        raise ReviewError("the text was changed: save it as an edit, or undo the change")
    status = {
        Decision.CONFIRM: ReviewStatus.CONFIRMED,
        Decision.EDIT: ReviewStatus.EDITED,
        Decision.REJECT: ReviewStatus.REJECTED,
    }[decision].value
    won = _claim(s, AgentText, agent_text_id, (ReviewStatus.PENDING.value,), status)
    row = s.get(AgentText, agent_text_id, populate_existing=True)
    if row is None:
        raise NotFound(f"agent text {agent_text_id} does not exist")
    if not won:
        raise _already(s, what, row.status, row.review_id)
    node = _lock_node(s, row.node_id)
    verdict = "rejected" if decision is Decision.REJECT else "confirmed"
    note = reason if decision is not Decision.EDIT else f"edited: {reason}"
    review = Review(
        target_table="agent_texts",
        target_id=row.id,
        reviewer=reviewer,
        verdict=verdict,
        note=note,
    )
    s.add(review)
    s.flush()
    row.review_id = review.id
    role = NODE_TEXT_ROLE.get(row.kind)
    if decision is not Decision.REJECT and role is not None and node is not None:
        s.add(_node_text(s, row, node.id, role, body, reviewer, review.id, decision))
    _raise_level(s, node)
    return review


def _node_text(
    s: Session,
    row: AgentText,
    node_id: int,
    role: tuple[str, str],
    body: str,
    reviewer: str,
    review_id: int,
    decision: Decision,
) -> TextRecord:
    """The node text a confirmed (or edited) agent text becomes, naming model and reviewer."""
    model = s.get(ModelEntry, row.model_id)
    model_name = (
        "an unknown model"
        if model is None
        else f"{model.name}@{model.revision}"
        if model.revision
        else model.name
    )
    how = "edited and confirmed" if decision is Decision.EDIT else "confirmed"
    return TextRecord(
        node_id=node_id,
        mention_id=row.mention_id,
        role=role[0],
        body=body,
        zone=role[1],
        licence=AGENT_TEXT_LICENCE,
        attribution=(
            f"written by {model_name} (template {row.template_id}), "
            f"{how} by {reviewer} (review {review_id})"
        ),
        author_kind="agent",
        author=reviewer if decision is Decision.EDIT else None,
        model_id=row.model_id,
        prompt_hash=row.template_hash,
    )


def decide_binding(
    s: Session, binding_id: int, decision: Decision, reviewer: str, reason: str
) -> Review:
    """Confirm or reject one open binding (a binding is not edited: reject and propose).

    Only a binding Lean checked (`checked`) can be confirmed, and (K6.5) only once each
    definition of an AI-written library its statement uses is confirmed; rejecting is possible
    at every stage before a person's decision. As for agent text, one conditional write
    decides: a racing decision (or a Lean check that changed the status meanwhile) loses it.
    """
    from math2.roles.align.bindings import BindingBlocked, require_definitions_confirmed
    from math2.roles.align.lifecycle import OPEN, can_confirm

    reason = _reason(reason)
    if decision is Decision.EDIT:
        raise ReviewError("a binding cannot be edited: reject it with the reason")
    row = s.get(Binding, binding_id)
    if row is None:
        raise NotFound(f"binding {binding_id} does not exist")
    what = f"binding {binding_id}"
    if row.status not in OPEN:
        raise _already(s, what, row.status, row.review_id)
    verdict = "confirmed" if decision is Decision.CONFIRM else "rejected"
    if decision is Decision.CONFIRM:
        if (why := can_confirm(row)) is not None:
            raise ReviewError(f"binding {binding_id} cannot be confirmed: {why}")
        try:  # K6.5: an AI-written library's definitions the statement uses come first
            require_definitions_confirmed(s, binding_id)
        except BindingBlocked as exc:
            raise ReviewError(str(exc)) from exc
    may = (BindingStatus.CHECKED.value,) if decision is Decision.CONFIRM else tuple(OPEN)
    won = _claim(s, Binding, binding_id, tuple(str(x) for x in may), verdict)
    row = s.get(Binding, binding_id, populate_existing=True)
    if row is None:
        raise NotFound(f"binding {binding_id} does not exist")
    if not won:
        if row.status in OPEN:  # a Lean check changed it meanwhile
            raise AlreadyDecided(f"binding {binding_id} cannot be confirmed: {can_confirm(row)}")
        raise _already(s, what, row.status, row.review_id)
    node = _lock_node(s, row.node_id)
    review = Review(
        target_table="bindings", target_id=row.id, reviewer=reviewer, verdict=verdict, note=reason
    )
    s.add(review)
    s.flush()
    row.review_id = review.id
    _raise_level(s, node)
    return review


def confirm_ai_definition(s: Session, mention_id: int, reviewer: str, reason: str) -> None:
    """K6.5: a person confirms one definition of an AI-written library, with a reason. Refused
    (ReviewError) for a declaration that is no definition (a theorem, a lemma: those are bound,
    not confirmed) or that belongs to a library people wrote; NotFound without such a row."""
    from math2.roles.align.bindings import DEFINITION_KINDS, confirm_definition
    from math2.store.models import AI_AUTHORED, Mention, Source

    row = s.execute(
        select(Mention.kind, Mention.authored, Mention.name, Source.authored)
        .join(Source, Source.id == Mention.source_id)
        .where(Mention.id == mention_id)
    ).first()
    if row is None:
        raise NotFound(f"declaration {mention_id} does not exist")
    kind, authored, name, library = row
    if kind not in DEFINITION_KINDS:
        raise ReviewError(
            f"{name} is a {kind or 'declaration of no kind'}, not a definition: only the "
            "definitions of an AI-written library are confirmed here"
        )
    if authored not in AI_AUTHORED and library not in AI_AUTHORED:
        raise ReviewError(f"{name} belongs to a library people wrote: it needs no confirmation")
    confirm_definition(s, mention_id, reviewer, _reason(reason))
