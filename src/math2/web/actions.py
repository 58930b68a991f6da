"""The review queue and the forms that decide: agent text, bindings, definitions (K6.5), audit
grades. All CSRF-checked, all for signed-in reviewers only.

A decision is one conditional write (`math2.web.review`): of two racing decisions on one item
one wins (303 back to the queue) and the other is refused with 409 and the queue again, with
the refused item at the top, the reviewer's text and reason still in its form.

The handlers are plain functions: FastAPI runs them in its thread pool, so their SQL never runs
on the event loop (their dependencies read the form on the loop first)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from math2.web import audit
from math2.web.app import MAX_ROW_ID, Router, RowId, page
from math2.web.queue import AGENT_TEXT, BINDING, KINDS, queue_item, review_queue
from math2.web.review import (
    Decision,
    NotFound,
    ReviewError,
    confirm_ai_definition,
    decide_agent_text,
    decide_binding,
)
from math2.web.security import (
    check_csrf,
    csrf_ok,
    current_reviewer,
    decision_form,
    optional_reviewer,
    require_reviewer,
)

router = Router()
Form = dict[str, str]


def local_path(path: str | None, default: str = "/") -> str:
    """A redirect target on this site only (no scheme, no host, no `//`)."""
    if path and path.startswith("/") and not path.startswith("//") and "\\" not in path:
        return path
    return default


def back_to(
    request: Request, to: str, kind: str, message: str, near: str | None = None
) -> RedirectResponse:
    """A 303 to `to` with a message shown on the page there: at the top, or inside the element
    `near` (the one `to`'s fragment scrolls to, so the message is in view)."""
    request.session["flash"] = [kind, message, near] if near else [kind, message]
    return RedirectResponse(to, status_code=303)


def _queue_args(back: str) -> tuple[str | None, int | None]:
    """The kind and the `after` of a queue page's address (a form's `back`); bad ones ignored."""
    query = parse_qs(urlsplit(back).query)
    kind = query.get("kind", [None])[0]
    after = query.get("after", [""])[0]
    return (
        kind if kind in KINDS else None,
        int(after) if after.isdigit() and int(after) <= MAX_ROW_ID else None,
    )


def _back(form: Form) -> str:
    back = local_path(form.get("back"), "/review")
    return back if urlsplit(back).path == "/review" else "/review"


@router.get("/review")
def review_page(
    request: Request,
    kind: Annotated[str | None, Query(max_length=40)] = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_ROW_ID)] = None,
) -> Response:
    if current_reviewer(request) is None:
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(here, safe='/')}", status_code=303)
    if kind is not None and kind not in KINDS:
        raise HTTPException(422, f"bad request (kind: one of {', '.join(KINDS)})")
    with request.app.state.store.session() as s:
        q = review_queue(s, kind, after if kind else None)
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return page(request, "review.html", q=q, kept=None, kept_item=None, back=back)


def _refused(request: Request, kind: str, item_id: int, form: Form, message: str) -> HTMLResponse:
    """A refused decision: the queue again (409) with the message, and the item at the top with
    the reviewer's text and reason in its form, whatever happened to the item meanwhile."""
    request.session["flash"] = ["error", message]
    kept = {"kind": kind, "id": item_id, "body": form.get("body"), "reason": form.get("reason", "")}
    back = _back(form)
    queue_kind, after = _queue_args(back)
    with request.app.state.store.session() as s:
        item = queue_item(s, kind, item_id)
        q = review_queue(s, queue_kind, after if queue_kind else None, skip=(kind, item_id))
    return page(request, "review.html", status_code=409, q=q, kept=kept, kept_item=item, back=back)


def _decision(value: str | None) -> Decision | None:
    try:
        return Decision(value or "")
    except ValueError:
        return None


def _review(request: Request, kind: str, item_id: int, form: Form, choose: str, decide) -> Response:
    """A review decision: `decide(session, decision)` → the message's tail, or the queue again
    (409) with the reviewer's edit when the decision is missing or refused."""
    label = {AGENT_TEXT: "Agent text", BINDING: "Binding"}[kind]
    decision = _decision(form.get("decision"))
    if decision is None:
        return _refused(request, kind, item_id, form, choose)
    try:
        with request.app.state.store.session() as s:
            outcome = decide(s, decision)
    except NotFound as exc:
        return page(request, "error.html", 404, message=f"{label} {item_id}: {exc}", back="/review")
    except ReviewError as exc:
        return _refused(request, kind, item_id, form, f"{label} {item_id}: {exc}")
    return back_to(request, _back(form), "ok", f"{label} {item_id}: {decision.value}{outcome}.")


def _kept(request: Request, kind: str, item_id: int, form: Form, who: str | None) -> HTMLResponse:
    """A decision that could not be taken as sent: the session ended (or the form is from
    before a new sign-in). Nothing is decided; the text and reason come back in the form, with
    this session's token, and the page says what to do."""
    kept = {"kind": kind, "id": item_id, "body": form.get("body"), "reason": form.get("reason", "")}
    return page(
        request,
        "kept.html",
        status_code=403,
        kept=kept,
        signed_in=who is not None,
        back=_back(form),
        action=f"/review/{kind}/{item_id}",
    )


@router.post("/review/agent-text/{item_id}")
def review_agent_text(
    request: Request,
    item_id: RowId,
    who: str | None = Depends(optional_reviewer),
    form: Form = Depends(decision_form),
) -> Response:
    if who is None or not csrf_ok(request, form):
        return _kept(request, AGENT_TEXT, item_id, form, who)

    def decide(s, decision: Decision) -> str:
        review = decide_agent_text(
            s, item_id, decision, who, form.get("reason", ""), form.get("body")
        )
        return f" ({review.verdict})"

    return _review(request, AGENT_TEXT, item_id, form, "Choose confirm, reject or edit.", decide)


@router.post("/review/binding/{item_id}")
def review_binding(
    request: Request,
    item_id: RowId,
    who: str | None = Depends(optional_reviewer),
    form: Form = Depends(decision_form),
) -> Response:
    if who is None or not csrf_ok(request, form):
        return _kept(request, BINDING, item_id, form, who)

    def decide(s, decision: Decision) -> str:
        decide_binding(s, item_id, decision, who, form.get("reason", ""))
        return ""

    return _review(request, BINDING, item_id, form, "Choose confirm or reject.", decide)


@router.post("/audit/{name}/grade/{sample_id}")
def grade(
    request: Request,
    name: str,
    sample_id: RowId,
    who: str = Depends(require_reviewer),
    form: Form = Depends(check_csrf),
) -> Response:
    to = f"/audit/{quote(name, safe='')}#sample-{sample_id}"
    try:
        with request.app.state.store.session() as s:
            audit.grade_sample(
                s, name, sample_id, who, form.get("grade", ""), form.get("reason", "")
            )
    except ReviewError as exc:
        return back_to(request, to, "error", f"Sample {sample_id}: {exc}", f"sample-{sample_id}")
    near = f"sample-{sample_id}"
    return back_to(request, to, "ok", f"Sample {sample_id} graded {form.get('grade')}.", near)


@router.post("/review/definition/{mention_id}")
def review_definition(
    request: Request,
    mention_id: RowId,
    who: str = Depends(require_reviewer),
    form: Form = Depends(check_csrf),
) -> Response:
    """K6.5: a person confirms one definition of an AI-written library, with a reason (once: a
    second or racing confirmation is refused with 409; a theorem, or a declaration of a library
    people wrote, is refused)."""
    from math2.errors import Math2Error
    from math2.roles.align.bindings import DefinitionDecided, DefinitionMissing

    to = local_path(form.get("next"), "/review")  # back to the page it was confirmed on
    try:
        with request.app.state.store.session() as s:
            confirm_ai_definition(s, mention_id, who, form.get("reason", ""))
    except (DefinitionMissing, NotFound) as exc:
        return page(request, "error.html", 404, message=f"Definition {mention_id}: {exc}", back=to)
    except DefinitionDecided as exc:
        return page(request, "error.html", 409, message=f"Definition {mention_id}: {exc}", back=to)
    except ReviewError as exc:
        return page(request, "error.html", 409, message=f"Declaration {mention_id}: {exc}", back=to)
    except Math2Error as exc:
        return back_to(request, to, "error", f"Definition {mention_id}: {exc}")
    return back_to(request, to, "ok", f"Definition {mention_id}: confirmed.")
