"""Forms that change something: sign in/out, review decisions, audit grades (all CSRF-checked;
reviewing and grading need a signed-in reviewer)."""

from __future__ import annotations

import secrets
import time
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse

from math2.web import audit, queries
from math2.web.accounts import authenticate
from math2.web.app import page
from math2.web.review import Decision, ReviewError, decide_agent_text, decide_binding
from math2.web.security import check_csrf, current_reviewer, require_reviewer

router = APIRouter()


class LoginThrottle:
    """At most `limit` failed sign-ins per name within `window_s` seconds (in this process)."""

    def __init__(self, limit: int = 5, window_s: float = 300.0):
        self.limit, self.window_s = limit, window_s
        self._fails: dict[str, list[float]] = {}

    def _recent(self, name: str) -> list[float]:
        now = time.monotonic()
        recent = [t for t in self._fails.get(name, []) if now - t < self.window_s]
        if recent:
            self._fails[name] = recent
        else:
            self._fails.pop(name, None)
        return recent

    def blocked(self, name: str) -> bool:
        """Whether sign-ins for this name are refused for now."""
        return len(self._recent(name)) >= self.limit

    def failed(self, name: str) -> None:
        """Count one failure."""
        self._fails.setdefault(name, []).append(time.monotonic())

    def clear(self, name: str) -> None:
        """Forget the failures after a good sign-in."""
        self._fails.pop(name, None)


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
    if throttle.blocked(username):
        return page(
            request,
            "login.html",
            status_code=429,
            next=target,
            error="Too many failed sign-ins for this name: wait a few minutes.",
        )
    name = authenticate(request.app.state.store, username, form.get("password", "")[:1000])
    if name is None:
        throttle.failed(username)
        return page(
            request, "login.html", status_code=401, next=target, error="Wrong name or password."
        )
    throttle.clear(username)
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


@router.post("/review/definition/{mention_id}")
async def review_definition(
    request: Request,
    mention_id: int,
    who: str = Depends(require_reviewer),
    form: dict = Depends(check_csrf),
):
    """K6.5: a person confirms one definition of an AI-written library."""
    from math2.errors import Math2Error
    from math2.roles.align.bindings import confirm_definition

    try:
        with request.app.state.store.session() as s:
            confirm_definition(s, mention_id, who)
    except Math2Error as exc:
        return _back(request, "/review", "error", f"Definition {mention_id}: {exc}")
    return _back(request, "/review", "ok", f"Definition {mention_id}: confirmed.")
