"""Public pages: home, search, node, library, runs and their trajectories, the audit report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from sqlalchemy import select

from math2.store import AuditGrade, AuditSample, Node, Run
from math2.web import audit, queries, run_queries
from math2.web.app import Router, RowId, page
from math2.web.security import current_reviewer

if TYPE_CHECKING:
    from math2.retrieval import Searcher

router = Router()


@router.get("/")
def home(request: Request) -> Response:
    with request.app.state.store.session() as s:
        libs = queries.libraries(request.app.state, s)
    return page(request, "home.html", libraries=[x for x in libs if x["active"] or x["retired"]])


@router.get("/static-lean.css")
def lean_css(request: Request) -> Response:
    return PlainTextResponse(request.app.state.lean_css, media_type="text/css")


def _searcher(request: Request) -> Searcher:
    """The app's one `Searcher` (indexes kept open, reopened when rebuilt)."""
    state = request.app.state
    searcher: Searcher | None = getattr(state, "searcher", None)
    if searcher is None:
        from math2.retrieval import Searcher

        searcher = state.searcher = Searcher(state.index_dir, state.store)
    return searcher


@router.get("/search")
def search(
    request: Request,
    q: str = Query("", max_length=500),
    library: str | None = Query(None, max_length=80),
    k: int = Query(20, ge=1, le=100),
) -> Response:
    """`math2.retrieval.search` rendered: the same hits as `math2 search` for the same query and
    library (the default library when none is named; `all` merges every built index)."""
    from math2.retrieval import ALL, NoIndex

    searcher = _searcher(request)
    hits, message, several = [], None, library == ALL
    try:
        library = library or searcher.default() or "mathlib"
        if q.strip():
            hits = searcher.search(q, library, k)
            several = len(searcher.scope(library)) > 1
            message = None if hits else "No declaration matches."
    except NoIndex as exc:
        message = str(exc)
    menu = list(searcher.built())
    return page(request, "search.html", q=q, library=library, hits=hits, message=message,
                menu=[*menu, ALL] if len(menu) > 1 else menu, several=several)  # fmt: skip


def _view(
    request: Request,
    template: str,
    view_of: Callable[..., dict[str, Any] | None],
    *args: Any,
    missing: str | None = None,
    **kw: Any,
) -> Response:
    """A page read by `view_of(session, *args, **kw)`: a dict of the template's names, or
    None for a 404 with `missing`."""
    with request.app.state.store.session() as s:
        view = view_of(s, *args, **kw)
    if view is None:
        raise HTTPException(404, missing)
    return page(request, template, **view)


@router.get("/decl/{mention_id}")
def declaration(request: Request, mention_id: RowId) -> Response:
    return _view(request, "decl.html", queries.declaration_view, mention_id,
                 missing=f"there is no declaration {mention_id}")  # fmt: skip


@router.get("/node/{node_id}")
def node(request: Request, node_id: RowId) -> Response:
    return _view(request, "node.html", queries.node_view, node_id,
                 missing=f"there is no node {node_id}")  # fmt: skip


@router.get("/node")
def node_by_key(request: Request, key: str = Query(..., max_length=200)) -> Response:
    with request.app.state.store.session() as s:
        node_id = s.scalar(select(Node.id).where(Node.key == key))
    if node_id is None:
        raise HTTPException(404, f"there is no node with key {key!r}")
    return RedirectResponse(f"/node/{node_id}", status_code=303)


@router.get("/library/{name}")
def library(request: Request, name: str) -> Response:
    return _view(request, "library.html", queries.library_view, name, request.app.state,
                 missing=f"there is no library {name!r}")  # fmt: skip


@router.get("/runs")
def runs(request: Request) -> Response:
    return _view(request, "runs.html", lambda s: {"runs": run_queries.runs(s)})


@router.get("/runs/{run_id}")
def run(
    request: Request, run_id: RowId, after: str | None = Query(None, max_length=500)
) -> Response:
    totals = request.app.state.run_totals
    return _view(request, "run.html", run_queries.run_view, run_id, after=after, cache=totals,
                 missing=f"there is no run {run_id}")  # fmt: skip


@router.get("/runs/{run_id}/trajectory")
def trajectory(request: Request, run_id: RowId, item: str = Query(..., max_length=500)) -> Response:
    with request.app.state.store.session() as s:
        run_ = s.get(Run, run_id)
        if run_ is None:
            raise HTTPException(404, f"there is no run {run_id}")
        state = run_queries.item_of(s, run_id, item)
        attempts = run_queries.trajectory(s, run_id, item)
    return page(request, "trajectory.html", run=run_, item=item, state=state, attempts=attempts)


@router.get("/audit")
def audit_index(request: Request) -> Response:
    return _view(request, "audits.html", lambda s: {"audits": audit.audits(s)})


@router.get("/audit/{name}")
def audit_page(request: Request, name: str) -> Response:
    who = current_reviewer(request)
    with request.app.state.store.session() as s:
        rows = audit.report(s, name)
        if not rows:
            raise HTTPException(404, f"there is no audit {name!r}")
        samples = (
            s.execute(
                select(AuditSample)
                .where(AuditSample.audit == name)
                .order_by(AuditSample.stratum, AuditSample.id)
            )
            .scalars()
            .all()
        )
        mine = {}
        if who:
            mine = {
                g.sample_id: g
                for g in s.execute(
                    select(AuditGrade)
                    .join(AuditSample, AuditSample.id == AuditGrade.sample_id)
                    .where(AuditSample.audit == name, AuditGrade.grader == who)
                ).scalars()
            }
    return page(request, "audit.html", name=name, report=rows, samples=samples, mine=mine)
