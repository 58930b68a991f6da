"""The web app: `create_app(store, index_dir)` → a FastAPI app with server-rendered pages."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRouter
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from fastapi.types import DecoratedCallable
from starlette.exceptions import HTTPException
from starlette.middleware.sessions import SessionMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from math2.store import Store
from math2.web import render
from math2.web.accounts import session_key
from math2.web.proxy import PeerRecorder, TrustedProxies
from math2.web.security import CSRF_FIELD, SecurityHeaders, csrf_token, current_reviewer, secure
from math2.web.throttle import LoginThrottle

HERE = Path(__file__).parent
SESSION_COOKIE = "math2_session"
log = logging.getLogger(__name__)
# A row id in a path: beyond the database's 64-bit integers there is no such row (404, never an
# OverflowError). Every integer in a path is one (tests/web/test_http.py checks each route).
MAX_ROW_ID = 2**63 - 1
MIN_PROXY_SECRET = 32
RowId = Annotated[int, PathParam(ge=0, le=MAX_ROW_ID)]


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    env = templates.env
    env.autoescape = True  # every template, whatever its name
    env.auto_reload = False  # the templates ship with the code: no stat of each file per page
    env.globals.update(
        math=render.math_html,
        markdown=render.markdown_html,
        lean=render.lean_html,
        crosswalk_url=render.crosswalk_url,
        csrf_field=CSRF_FIELD,
    )
    return templates


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render a template with the signed-in reviewer, the CSRF token and the flash message."""
    templates: Jinja2Templates = request.app.state.templates
    flash = request.session.pop("flash", None)
    return templates.TemplateResponse(
        request,
        template,
        {
            "reviewer": current_reviewer(request),
            "csrf": csrf_token(request),
            "flash": flash,
            **context,
        },
        status_code=status_code,
    )


class Router(APIRouter):
    """The web app's routers: every GET route answers HEAD too (the server sends the GET's
    status and headers without its body)."""

    def get(self, path: str, **kw: Any) -> Callable[[DecoratedCallable], DecoratedCallable]:
        return self.api_route(path, methods=["GET", "HEAD"], **kw)


def create_app(
    store: Store,
    index_dir: Path,
    *,
    secret: str | None = None,
    trusted_header: str | None = None,
    trusted_header_secret: str | None = None,
    trusted_proxies: Iterable[str] | TrustedProxies = (),
    https_only: bool = False,
    login_throttle: LoginThrottle | None = None,
) -> FastAPI:
    """The app over one store. `index_dir` holds one search index folder per library.

    `secret` signs session cookies (when None, the key generated once into the store,
    `accounts.session_key`: a restart keeps the sessions; the cookie only carries a session
    token, the session itself lives in the store).
    `trusted_proxies` (addresses, networks or `loopback`; none by default) are the reverse
    proxies whose `X-Forwarded-For`/`-Proto` are believed (`math2.web.proxy`); `trusted_header`
    names a header such a proxy sets to the signed-in user's name, read only when the socket
    peer is one of them and the request carries `trusted_header_secret` in
    `X-Math2-Proxy-Secret` (which the proxy adds; at least `MIN_PROXY_SECRET` characters). A bad
    address raises `ProxyError`.
    """
    from math2.web import actions, bindings, pages, signin

    proxies = (
        trusted_proxies
        if isinstance(trusted_proxies, TrustedProxies)
        else TrustedProxies.parse(trusted_proxies)
    )
    if trusted_header and not proxies:
        raise ValueError("a trusted header needs the trusted proxies that set it")
    if trusted_header and len(trusted_header_secret or "") < MIN_PROXY_SECRET:
        raise ValueError(
            f"a trusted header needs the proxy's secret ({MIN_PROXY_SECRET} characters or more)"
        )

    app = FastAPI(title="math2", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.index_dir = Path(index_dir)
    app.state.indexes = {}
    app.state.run_totals = {}
    app.state.trusted_header = trusted_header
    app.state.trusted_header_secret = (trusted_header_secret or "").encode()
    app.state.trusted_proxies = proxies
    app.state.templates = _templates()
    throttle = login_throttle or LoginThrottle()
    if throttle.store is None:
        throttle.store = store
    app.state.login_throttle = throttle
    app.state.lean_css = render.lean_css()
    app.add_middleware(SecurityHeaders)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret or session_key(store),
        session_cookie=SESSION_COOKIE,
        same_site="strict",
        https_only=https_only,
        max_age=12 * 3600,
    )
    if proxies:  # X-Forwarded-For and -Proto, from these peers only
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies.as_strings())
    # outermost of ours: the socket peer, before any header
    app.add_middleware(PeerRecorder, watch=not proxies, unix_peer=proxies.unix_socket)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.include_router(pages.router)
    app.include_router(signin.router)
    app.include_router(actions.router)
    app.include_router(bindings.router)

    # Plain functions: Starlette runs them in its thread pool (`page` asks the store who is
    # signed in, never on the event loop).
    @app.exception_handler(HTTPException)
    def _http_error(request: Request, exc: HTTPException) -> HTMLResponse:
        return page(request, "error.html", status_code=exc.status_code, message=exc.detail)

    @app.exception_handler(RequestValidationError)
    def _bad_request(request: Request, exc: RequestValidationError) -> HTMLResponse:
        errors = exc.errors()
        if any(e.get("loc", ("",))[0] == "path" for e in errors):
            return page(request, "error.html", status_code=404, message="there is no such page")
        wrong = "; ".join(
            f"{'.'.join(str(x) for x in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
            for e in errors
        )
        return page(request, "error.html", status_code=422, message=f"bad request ({wrong})")

    @app.exception_handler(Exception)
    async def _server_error(request: Request, exc: Exception) -> HTMLResponse:
        # Answered by the outermost middleware, past SecurityHeaders: set the headers here.
        log.exception("error on %s %s", request.method, request.url.path)
        templates: Jinja2Templates = request.app.state.templates
        response = templates.TemplateResponse(
            request,
            "error.html",
            {
                "reviewer": None,
                "csrf": "",
                "flash": None,
                "message": "Something went wrong on the server; it is logged. Try again later.",
            },
            status_code=500,
        )
        return secure(response, no_store=True)

    return app
