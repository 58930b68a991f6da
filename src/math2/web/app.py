"""The web app: `create_app(store, index_dir)` → a FastAPI app with server-rendered pages."""

from __future__ import annotations

import secrets
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException
from starlette.middleware.sessions import SessionMiddleware

from math2.store import Store
from math2.web import render
from math2.web.security import CSRF_FIELD, SecurityHeaders, csrf_token, current_reviewer

HERE = Path(__file__).parent
SESSION_COOKIE = "math2_session"


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    env = templates.env
    env.autoescape = True  # every template, whatever its name
    env.globals.update(
        math=render.math_html,
        lean=render.lean_html,
        crosswalk_url=render.crosswalk_url,
        csrf_field=CSRF_FIELD,
    )
    return templates


def page(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
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


def create_app(
    store: Store,
    index_dir: Path,
    *,
    secret: str | None = None,
    trusted_header: str | None = None,
    https_only: bool = False,
) -> FastAPI:
    """The app over one store. `index_dir` holds one search index folder per library.

    `secret` signs session cookies (a random one per start when None: sessions end with the
    process). `trusted_header` names a header a reverse proxy sets to the signed-in user's name;
    only set it when every request reaches the app through that proxy.
    """
    from math2.web import actions, pages

    app = FastAPI(title="math2", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.index_dir = Path(index_dir)
    app.state.indexes = {}
    app.state.trusted_header = trusted_header
    app.state.templates = _templates()
    app.state.login_throttle = actions.LoginThrottle()
    app.state.lean_css = render.lean_css()
    app.add_middleware(SecurityHeaders)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret or secrets.token_urlsafe(32),
        session_cookie=SESSION_COOKIE,
        same_site="strict",
        https_only=https_only,
        max_age=12 * 3600,
    )
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.include_router(pages.router)
    app.include_router(actions.router)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        return page(request, "error.html", status_code=exc.status_code, message=exc.detail)

    return app
