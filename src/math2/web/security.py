"""Who is signed in, CSRF tokens, and the security headers of every response."""

from __future__ import annotations

import secrets

from fastapi import HTTPException, Request
from starlette.middleware.base import BaseHTTPMiddleware

from math2.web.accounts import active_reviewer

CSRF_FIELD = "csrf_token"
# KaTeX writes inline style attributes, hence 'unsafe-inline' for styles only; no inline script
# runs at all, so text that slipped past escaping still could not execute.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "font-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def csrf_token(request: Request) -> str:
    """This session's CSRF token (created on first use)."""
    token = request.session.get("csrf")
    if not token:
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def current_reviewer(request: Request) -> str | None:
    """The signed-in reviewer: from the session, or from the trusted proxy header when the app
    was started with one. Checked against the `reviewers` table on every request."""
    store = request.app.state.store
    header = request.app.state.trusted_header
    if header:
        name = active_reviewer(store, request.headers.get(header))
        if name:
            return name
    return active_reviewer(store, request.session.get("user"))


async def check_csrf(request: Request) -> dict[str, str]:
    """The submitted form, once its CSRF token matches the session's and its Origin (when sent)
    is this site; otherwise 403."""
    form = await request.form()
    sent = form.get(CSRF_FIELD)
    expected = request.session.get("csrf")
    if not isinstance(sent, str) or not expected or not secrets.compare_digest(sent, expected):
        raise HTTPException(403, "missing or wrong CSRF token: reload the page and try again")
    origin = request.headers.get("origin")
    if origin and origin != "null":
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin != own:
            raise HTTPException(403, "cross-site form submission refused")
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def require_reviewer(request: Request) -> str:
    """The signed-in reviewer, or 403 (reviewing and grading are for reviewers only)."""
    who = current_reviewer(request)
    if who is None:
        raise HTTPException(403, "sign in as a reviewer to do this")
    return who


class SecurityHeaders(BaseHTTPMiddleware):
    """CSP, no sniffing, no framing, no referrer leaks."""

    async def dispatch(self, request, call_next):
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response
