"""Who is signed in, CSRF tokens, and the security headers of every response."""

from __future__ import annotations

import secrets
from typing import TypeVar

from fastapi import HTTPException, Request
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from math2.util.textlimit import too_long
from math2.web.accounts import active_reviewer, session_reviewer
from math2.web.forms import SMALL_BODY, decision_body, read_form
from math2.web.proxy import from_trusted_proxy

R = TypeVar("R", bound=Response)
CSRF_FIELD = "csrf_token"
SESSION_KEY = "sid"  # the session token in the signed cookie; the store holds its digest
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


PROXY_SECRET_HEADER = "X-Math2-Proxy-Secret"


def _proxy_secret_ok(request: Request) -> bool:
    """Whether the request carries the deployment's proxy secret (constant-time compare): what
    only the proxy adds, so a local process that reaches the server from the proxy's address
    cannot name a reviewer."""
    expected: bytes = request.app.state.trusted_header_secret
    sent = request.headers.get(PROXY_SECRET_HEADER)
    return bool(expected) and sent is not None and secrets.compare_digest(sent.encode(), expected)


def current_reviewer(request: Request) -> str | None:
    """The signed-in reviewer: from the session held in the store, or from the trusted proxy
    header when the app was started with one, the socket peer is a trusted proxy (whatever
    `X-Forwarded-For` says) and the request carries the proxy secret (`PROXY_SECRET_HEADER`).
    Checked against the store on every request (once per request)."""
    if hasattr(request.state, "reviewer"):
        return request.state.reviewer
    store = request.app.state.store
    header = request.app.state.trusted_header
    name = None
    if header and from_trusted_proxy(request) and _proxy_secret_ok(request):
        name = active_reviewer(store, request.headers.get(header))
    if name is None:
        name = session_reviewer(store, request.session.get(SESSION_KEY))
    request.state.reviewer = name
    return name


def csrf_ok(request: Request, form: dict[str, str]) -> bool:
    """Whether the form's CSRF token is this session's (constant-time compare)."""
    sent = form.get(CSRF_FIELD)
    expected = request.session.get("csrf")
    if not isinstance(sent, str) or not isinstance(expected, str) or not expected:
        return False
    return secrets.compare_digest(sent.encode(), expected.encode())


def _same_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    # `null` is what sandboxed frames, data: pages and some redirects send: not this site.
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise HTTPException(403, "cross-site form submission refused")


def _fields_within_limit(form: dict[str, str]) -> dict[str, str]:
    for k, v in form.items():
        if (reason := too_long(v, f"the form field {k!r}")) is not None:
            raise HTTPException(413, reason)
    return form


async def check_csrf(request: Request) -> dict[str, str]:
    """The submitted form, once its CSRF token matches the session's and its Origin (when sent)
    is this site; otherwise 403. The form is read by `math2.web.forms.read_form` first
    (urlencoded only, capped while reading): a reviewer already checked by `require_reviewer`
    may send a text at the text limit, anyone else `SMALL_BODY`."""
    signed_in = getattr(request.state, "reviewer", None) is not None
    form = await read_form(request, decision_body() if signed_in else SMALL_BODY)
    if not csrf_ok(request, form):
        raise HTTPException(403, "missing or wrong CSRF token: reload the page and try again")
    _same_origin(request)
    return _fields_within_limit(form)


async def decision_form(request: Request) -> dict[str, str]:
    """A decision's form, read like `check_csrf`'s but with its CSRF token not yet checked: a
    decision sent from a session that has ended since (or from before a new sign-in) is
    answered with its text and reason kept (`csrf_ok` decides). Room for a text at the limit
    when the cookie carries a session token (ended or not), else `SMALL_BODY`; memory only."""
    has_session = getattr(request.state, "reviewer", None) is not None or bool(
        request.session.get(SESSION_KEY)
    )
    form = await read_form(request, decision_body() if has_session else SMALL_BODY)
    _same_origin(request)
    return _fields_within_limit(form)


def optional_reviewer(request: Request) -> str | None:
    """The signed-in reviewer or None (a plain function: run in the thread pool)."""
    return current_reviewer(request)


def require_reviewer(request: Request) -> str:
    """The signed-in reviewer, or 403 (reviewing and grading are for reviewers only); a plain
    function, so FastAPI asks the store from its thread pool, not on the event loop."""
    who = current_reviewer(request)
    if who is None:
        raise HTTPException(403, "sign in as a reviewer to do this")
    return who


def _set_headers(headers: MutableHeaders, no_store: bool) -> None:
    headers.setdefault("Content-Security-Policy", CSP)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    if no_store:
        headers["Cache-Control"] = "no-store"


def secure(response: R, no_store: bool = False) -> R:
    """Set the security headers (and, for pages with a reviewer's data, no caching)."""
    _set_headers(response.headers, no_store)
    return response


class SecurityHeaders:
    """CSP, no sniffing, no framing, no referrer leaks; nothing a signed-in reviewer sees is
    kept in a cache. A plain ASGI middleware: it sets the headers on the response's start as it
    passes (no task or stream of its own per request, unlike Starlette's BaseHTTPMiddleware).
    Who is signed in is read from the request's state when the response starts, after the
    route ran. (Unhandled errors are answered outside this middleware: the app's 500 handler
    calls `secure` itself.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})  # `request.state`: one dict for every layer

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                signed_in = state.get("reviewer") is not None
                no_store = signed_in or scope["path"] in NO_STORE
                _set_headers(MutableHeaders(scope=message), no_store)
            await send(message)

        await self.app(scope, receive, send_secured)


NO_STORE = frozenset({"/review", "/login"})
