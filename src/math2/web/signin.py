"""Signing in and out (CSRF-checked; throttled by `math2.web.throttle`).

The form is read on the event loop; the password check runs in the throttle's bounded worker
threads, everything that touches the store in the thread pool."""

from __future__ import annotations

import secrets

import anyio
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
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
from math2.web.security import SESSION_KEY, check_csrf
from math2.web.throttle import LoginThrottle, refusal

router = Router()


@router.get("/login")
def login_form(request: Request, next: str = "/review") -> HTMLResponse:
    return page(request, "login.html", next=local_path(next, "/review"), error=None)


@router.post("/login")
async def login(request: Request, form: Form = Depends(check_csrf)) -> Response:
    username = form.get("username", "")[:200]
    target = local_path(form.get("next"), "/review")
    throttle: LoginThrottle = request.app.state.login_throttle
    address = client_address(request)
    admission = await run_in_threadpool(throttle.admit, address, username)
    if admission.wait:
        return refusal(admission)
    store = request.app.state.store
    password = form.get("password", "")[:1000]
    name = None
    if await run_in_threadpool(has_password, store, username):
        name = await throttle.run_hash(admission.known, authenticate, store, username, password)
    else:  # no hash for a name that is no account, but as long as one
        await anyio.sleep(throttle.hash_seconds())
    token = await run_in_threadpool(_start_session, store, name) if name is not None else None
    if name is None or token is None:
        return await run_in_threadpool(
            page,
            request,
            "login.html",
            status_code=401,
            next=target,
            error="Wrong name or password.",
        )
    await run_in_threadpool(throttle.succeeded, address, username, admission)
    return await run_in_threadpool(_signed_in, request, name, token, target)


def _start_session(store: Store, name: str) -> str | None:
    """A new session for `name`, or None when the reviewer was deactivated since the check."""
    try:
        return start_session(store, name)
    except AccountError:
        return None


def _signed_in(request: Request, name: str, token: str, target: str) -> RedirectResponse:
    """End the old session; the browser's session is the signed-in reviewer's from now on."""
    end_session(request.app.state.store, request.session.get(SESSION_KEY))
    request.session.clear()  # a fresh session (and CSRF token) for the signed-in reviewer
    request.session[SESSION_KEY] = token
    request.session["csrf"] = secrets.token_urlsafe(32)
    request.state.reviewer = name
    return back_to(request, target, "ok", f"Signed in as {name}.")


# A plain function: FastAPI runs it in its thread pool (its dependency reads the form first).
@router.post("/logout")
def logout(request: Request, form: Form = Depends(check_csrf)) -> RedirectResponse:
    end_session(request.app.state.store, request.session.get(SESSION_KEY))
    request.session.clear()
    request.state.reviewer = None
    return RedirectResponse("/", status_code=303)
