"""Forms that change something: sign in/out, review decisions, audit grades (all CSRF-checked;
reviewing and grading need a signed-in reviewer).

No handler runs SQL on the event loop: the form is read there (`check_csrf`), the rest runs in
the thread pool (a plain `def` handler, or `run_in_threadpool` around the store's part of a
sign-in, whose password hashing has its own bounded threads)."""

from __future__ import annotations

import secrets
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from math2.web import audit, queries
from math2.web.accounts import AccountError, authenticate, end_session, start_session
from math2.web.app import RowId, page
from math2.web.review import Decision, ReviewError, decide_agent_text, decide_binding
from math2.web.security import SESSION_KEY, check_csrf, current_reviewer, require_reviewer
from math2.web.throttle import LoginThrottle

router = APIRouter()


def _local(path: str | None, default: str = "/") -> str:
    """A redirect target on this site only (no scheme, no host, no `//`)."""
    if path and path.startswith("/") and not path.startswith("//") and "\\" not in path:
        return path
    return default


def _back(request: Request, to: str, kind: str, message: str) -> RedirectResponse:
    request.session["flash"] = [kind, message]
    return RedirectResponse(to, status_code=303)


@router.get("/login")
def login_form(request: Request, next: str = "/review"):
    return page(request, "login.html", next=_local(next, "/review"), error=None)


@router.post("/login")
async def login(request: Request, form: dict = Depends(check_csrf)):
    username = form.get("username", "")[:200]
    target = _local(form.get("next"), "/review")
    throttle: LoginThrottle = request.app.state.login_throttle
    address = request.client.host if request.client else "?"
    wait = throttle.admit(address, username)
    if wait:
        response = await run_in_threadpool(
            page,
            request,
            "login.html",
            status_code=429,
            next=target,
            error=f"Too many failed sign-ins: wait {wait:.0f} s and try again.",
        )
        response.headers["Retry-After"] = str(int(wait))
        return response
    store = request.app.state.store
    name = await throttle.run_hash(authenticate, store, username, form.get("password", "")[:1000])
    token = await run_in_threadpool(_start_session, store, name) if name is not None else None
    if token is None:
        throttle.failed(address, username)
        return await run_in_threadpool(
            page,
            request,
            "login.html",
            status_code=401,
            next=target,
            error="Wrong name or password.",
        )
    throttle.succeeded(address, username)
    return await run_in_threadpool(_signed_in, request, name, token, target)


def _start_session(store, name: str) -> str | None:
    """A new session for `name`, or None when the reviewer was deactivated since the check."""
    try:
        return start_session(store, name)
    except AccountError:
        return None


def _signed_in(request: Request, name: str, token: str, target: str):
    """End the old session; the browser's session is the signed-in reviewer's from now on."""
    end_session(request.app.state.store, request.session.get(SESSION_KEY))
    request.session.clear()  # a fresh session (and CSRF token) for the signed-in reviewer
    request.session[SESSION_KEY] = token
    request.session["csrf"] = secrets.token_urlsafe(32)
    request.state.reviewer = name
    return _back(request, target, "ok", f"Signed in as {name}.")


# The handlers below are plain functions: FastAPI runs them in its thread pool, so their SQL
# never runs on the event loop (their dependencies read the form on the loop first).
@router.post("/logout")
def logout(request: Request, form: dict = Depends(check_csrf)):
    end_session(request.app.state.store, request.session.get(SESSION_KEY))
    request.session.clear()
    request.state.reviewer = None
    return RedirectResponse("/", status_code=303)


@router.get("/review")
def review_queue(request: Request):
    if current_reviewer(request) is None:
        return RedirectResponse("/login?next=/review", status_code=303)
    return _queue_page(request)


def _queue_page(request: Request, kept: dict | None = None, status_code: int = 200):
    """The queue; `kept` puts a refused form's text and reason back into that item's form, so
    that a refusal never loses what the reviewer typed."""
    with request.app.state.store.session() as s:
        queue = queries.review_queue(s)
    return page(request, "review.html", status_code=status_code, kept=kept or {}, **queue)


def _refused(request: Request, kind: str, item_id: int, form: dict, message: str):
    """A refused decision: the queue again (409), with the message and the reviewer's edit."""
    request.session["flash"] = ["error", message]
    kept = {
        "kind": kind,
        "id": item_id,
        "body": form.get("body"),
        "reason": form.get("reason", ""),
    }
    return _queue_page(request, kept=kept, status_code=409)


def _decision(value: str | None) -> Decision | None:
    try:
        return Decision(value or "")
    except ValueError:
        return None


def _review(request: Request, kind: str, item_id: int, form: dict, choose: str, decide):
    """A review decision: `decide(session, decision)` → the message's tail, or the queue again
    (409) with the reviewer's edit when the decision is missing or refused."""
    label = {"agent-text": "Agent text", "binding": "Binding"}[kind]
    decision = _decision(form.get("decision"))
    if decision is None:
        return _refused(request, kind, item_id, form, choose)
    try:
        with request.app.state.store.session() as s:
            outcome = decide(s, decision)
    except ReviewError as exc:
        return _refused(request, kind, item_id, form, f"{label} {item_id}: {exc}")
    return _back(request, "/review", "ok", f"{label} {item_id}: {decision.value}{outcome}.")


@router.post("/review/agent-text/{item_id}")
def review_agent_text(
    request: Request,
    item_id: RowId,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    def decide(s, decision: Decision) -> str:
        review = decide_agent_text(
            s, item_id, decision, who, form.get("reason", ""), form.get("body")
        )
        return f" ({review.verdict})"

    return _review(request, "agent-text", item_id, form, "Choose confirm, reject or edit.", decide)


@router.post("/review/binding/{item_id}")
def review_binding(
    request: Request,
    item_id: RowId,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    def decide(s, decision: Decision) -> str:
        decide_binding(s, item_id, decision, who, form.get("reason", ""))
        return ""

    return _review(request, "binding", item_id, form, "Choose confirm or reject.", decide)


@router.post("/audit/{name}/grade/{sample_id}")
def grade(
    request: Request,
    name: str,
    sample_id: RowId,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    to = f"/audit/{quote(name, safe='')}#sample-{sample_id}"
    try:
        with request.app.state.store.session() as s:
            audit.grade_sample(
                s, name, sample_id, who, form.get("grade", ""), form.get("reason", "")
            )
    except ReviewError as exc:
        return _back(request, to, "error", f"Sample {sample_id}: {exc}")
    return _back(request, to, "ok", f"Sample {sample_id} graded {form.get('grade')}.")


@router.post("/review/definition/{mention_id}")
def review_definition(
    request: Request,
    mention_id: int,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    """K6.5: a person confirms one definition of an AI-written library."""
    from math2.errors import Math2Error
    from math2.roles.align.bindings import confirm_definition

    to = _local(form.get("next"), "/review")  # back to the binding page it was confirmed on
    try:
        with request.app.state.store.session() as s:
            confirm_definition(s, mention_id, who)
    except Math2Error as exc:
        return _back(request, to, "error", f"Definition {mention_id}: {exc}")
    return _back(request, to, "ok", f"Definition {mention_id}: confirmed.")
