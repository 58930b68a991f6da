"""Signing in and out (CSRF-checked; throttled by `math2.web.throttle`).

The form is read on the event loop; the password check runs in the throttle's bounded worker
threads, everything that touches the store in the thread pool: one trip for the budgets (and
whether the name is an account), one for the password and the new session, so a sign-in waits
behind a flood's requests as few times as it can.

The sign-in page of an anonymous visitor (the page every attacker asks for, and the 401 of a
wrong password) is `LoginPage`: `login.html` rendered once, its CSRF token, `next` and error
filled in per request; a visitor with a session or a message to show gets the full render."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import anyio
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import escape
from starlette.concurrency import run_in_threadpool

from math2.store import Store
from math2.web.accounts import (
    AccountError,
    authenticate,
    end_session,
    has_password,
    start_session,
)
from math2.web.actions import Form, back_to, local_path
from math2.web.app import Router, page
from math2.web.proxy import client_address
from math2.web.security import SESSION_KEY, check_csrf, csrf_token
from math2.web.throttle import Admission, LoginThrottle, refusal

router = Router()
WRONG = "Wrong name or password."
# Stand-ins rendered into the page once and replaced per request (escaping leaves them alone)
_SLOTS = {k: f"\x1fmath2-{k}\x1f" for k in ("csrf", "next", "error")}
_SLOT_RE = re.compile("(" + "|".join(re.escape(v) for v in _SLOTS.values()) + ")")


@dataclass(frozen=True)
class LoginPage:
    """`login.html` for a visitor with no reviewer signed in and no flash message, rendered once
    without and once with an error: the literal parts and, between them, the slot names."""

    parts: dict[bool, tuple[str, ...]]

    @classmethod
    def render(cls, templates: Jinja2Templates) -> LoginPage:
        template = templates.env.get_template("login.html")
        parts = {}
        for with_error in (False, True):
            text = template.render(
                reviewer=None,
                flash=None,
                csrf=_SLOTS["csrf"],
                next=_SLOTS["next"],
                error=_SLOTS["error"] if with_error else None,
            )
            parts[with_error] = tuple(_SLOT_RE.split(text))
        return cls(parts)

    def html(self, csrf: str, next: str, error: str | None) -> str:
        """The page with these values, escaped as the template escapes them."""
        values = {"csrf": csrf, "next": next, "error": error or ""}
        filled = {_SLOTS[k]: str(escape(v)) for k, v in values.items()}
        return "".join(filled.get(p, p) for p in self.parts[error is not None])


def _cached_page_fits(request: Request) -> bool:
    """Whether `LoginPage` is this request's page: no session token (so no reviewer signed in),
    no identity header that could name one, no flash message waiting."""
    header = request.app.state.trusted_header
    return (
        not request.session.get(SESSION_KEY)
        and "flash" not in request.session
        and not (header and header in request.headers)
    )


async def _login_page(
    request: Request, target: str, error: str | None = None, status_code: int = 200
) -> HTMLResponse:
    if not _cached_page_fits(request):  # the full render asks the store who is signed in
        return await run_in_threadpool(
            page, request, "login.html", status_code=status_code, next=target, error=error
        )
    cached: LoginPage | None = getattr(request.app.state, "login_page", None)
    if cached is None:
        cached = request.app.state.login_page = LoginPage.render(request.app.state.templates)
    return HTMLResponse(cached.html(csrf_token(request), target, error), status_code=status_code)


@router.get("/login")
async def login_form(request: Request, next: str = "/review") -> HTMLResponse:
    return await _login_page(request, local_path(next, "/review"))


def _admit(
    throttle: LoginThrottle, store: Store, address: str, username: str
) -> tuple[Admission, bool]:
    """The throttle's answer, and whether the name is an account whose check costs a hash."""
    admission = throttle.admit(address, username)
    return admission, not admission.wait and has_password(store, username)


@router.post("/login")
async def login(request: Request, form: Form = Depends(check_csrf)) -> Response:
    username = form.get("username", "")[:200]
    target = local_path(form.get("next"), "/review")
    throttle: LoginThrottle = request.app.state.login_throttle
    address = client_address(request)
    store = request.app.state.store
    admission, account = await throttle.run_admit(_admit, throttle, store, address, username)
    if admission.wait:
        return refusal(admission)
    password = form.get("password", "")[:1000]
    if account:  # the check, and on success the new session, in one worker thread trip
        attempt = _Attempt(address, username, password, target, admission)
        signed_in = await throttle.run_hash(admission.known, _check, request, throttle, attempt)
        if signed_in is not None:
            return signed_in
    else:  # no hash for a name that is no account, but as long as one
        await anyio.sleep(throttle.hash_seconds())
    return await _login_page(request, target, WRONG, status_code=401)


@dataclass(frozen=True)
class _Attempt:
    address: str
    username: str
    password: str
    target: str
    admission: Admission


def _check(request: Request, throttle: LoginThrottle, attempt: _Attempt) -> RedirectResponse | None:
    """Check the password (argon2); when right, a new session for the reviewer (None when wrong
    or when the reviewer was deactivated since): its attempts go back to the budgets, the old
    session ends, and the browser's session is the signed-in reviewer's from now on."""
    store = request.app.state.store
    name = authenticate(store, attempt.username, attempt.password)
    if name is None:
        return None
    try:
        token = start_session(store, name)
    except AccountError:
        return None
    throttle.succeeded(attempt.address, name, attempt.admission)
    end_session(store, request.session.get(SESSION_KEY))
    request.session.clear()  # a fresh session (and CSRF token) for the signed-in reviewer
    request.session[SESSION_KEY] = token
    request.session["csrf"] = secrets.token_urlsafe(32)
    request.state.reviewer = name
    return back_to(request, attempt.target, "ok", f"Signed in as {name}.")


# A plain function: FastAPI runs it in its thread pool (its dependency reads the form first).
@router.post("/logout")
def logout(request: Request, form: Form = Depends(check_csrf)) -> RedirectResponse:
    end_session(request.app.state.store, request.session.get(SESSION_KEY))
    request.session.clear()
    request.state.reviewer = None
    return RedirectResponse("/", status_code=303)
