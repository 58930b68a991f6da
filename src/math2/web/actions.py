"""Forms that change something: sign in/out, review decisions, audit grades (all CSRF-checked;
reviewing and grading need a signed-in reviewer)."""

from __future__ import annotations

import secrets
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse

from math2.web import audit, queries
from math2.web.accounts import authenticate
from math2.web.app import page
from math2.web.review import Decision, ReviewError, decide_agent_text, decide_binding
from math2.web.security import check_csrf, current_reviewer, require_reviewer

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
    name = authenticate(
        request.app.state.store, form.get("username", "")[:200], form.get("password", "")[:1000]
    )
    target = _local(form.get("next"), "/review")
    if name is None:
        return page(
            request, "login.html", status_code=401, next=target, error="Wrong name or password."
        )
    request.session.clear()  # a fresh session (and CSRF token) for the signed-in reviewer
    request.session["user"] = name
    request.session["csrf"] = secrets.token_urlsafe(32)
    return _back(request, target, "ok", f"Signed in as {name}.")


@router.post("/logout")
async def logout(request: Request, form: dict = Depends(check_csrf)):
    request.session.clear()
    return RedirectResponse("/", status_code=303)


@router.get("/review")
def review_queue(request: Request):
    if current_reviewer(request) is None:
        return RedirectResponse("/login?next=/review", status_code=303)
    with request.app.state.store.session() as s:
        queue = queries.review_queue(s)
    return page(request, "review.html", **queue)


def _decision(value: str | None) -> Decision | None:
    try:
        return Decision(value or "")
    except ValueError:
        return None


@router.post("/review/agent-text/{item_id}")
async def review_agent_text(
    request: Request,
    item_id: int,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    decision = _decision(form.get("decision"))
    if decision is None:
        return _back(request, "/review", "error", "Choose confirm, reject or edit.")
    try:
        with request.app.state.store.session() as s:
            review = decide_agent_text(
                s, item_id, decision, who, form.get("reason", ""), form.get("body")
            )
            verdict = review.verdict
    except ReviewError as exc:
        return _back(request, "/review", "error", f"Agent text {item_id}: {exc}")
    return _back(request, "/review", "ok", f"Agent text {item_id}: {decision.value} ({verdict}).")


@router.post("/review/binding/{item_id}")
async def review_binding(
    request: Request,
    item_id: int,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    decision = _decision(form.get("decision"))
    if decision is None:
        return _back(request, "/review", "error", "Choose confirm or reject.")
    try:
        with request.app.state.store.session() as s:
            decide_binding(s, item_id, decision, who, form.get("reason", ""))
    except ReviewError as exc:
        return _back(request, "/review", "error", f"Binding {item_id}: {exc}")
    return _back(request, "/review", "ok", f"Binding {item_id}: {decision.value}.")


@router.post("/audit/{name}/grade/{sample_id}")
async def grade(
    request: Request,
    name: str,
    sample_id: int,
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
