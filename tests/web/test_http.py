"""The app over HTTP without a browser: its pages and routes answer, errors are pages with the
security headers, ids and HEAD behave on every route (sign-in, sessions and CSRF:
`test_http_access.py`)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import select

from math2.web import create_app
from tests.web.conftest import _sign_in


def test_public_pages_answer(client) -> None:
    c, _, seeded = client
    for path in (
        "/",
        "/search?q=prime",
        f"/node/{seeded.node_id}",
        "/library/mathlib",
        "/runs",
        f"/runs/{seeded.run_id}",
        f"/runs/{seeded.run_id}/trajectory?item=item-c",
        "/audit",
        f"/audit/{seeded.audit}",
    ):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "default-src 'self'" in r.headers["content-security-policy"]
    assert c.get("/node/999").status_code == 404
    assert "Nat.Prime.two_le" in c.get("/search?q=prime two").text


def test_search_without_an_index_says_so(web_store) -> None:
    store, _, index_dir = web_store
    with TestClient(create_app(store, index_dir / "missing", secret="s")) as c:
        r = c.get("/search?q=prime")
    assert r.status_code == 200 and "No search index is built" in r.text


HUGE = "99999999999999999999999"


def _has_headers(r) -> None:
    assert "default-src 'self'" in r.headers["content-security-policy"]
    assert (
        r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
    )


def test_errors_are_pages_with_the_security_headers(client) -> None:
    c, _, seeded = client
    token = _sign_in(c)
    for method, path in (
        ("get", f"/node/{HUGE}"),
        ("get", f"/runs/{HUGE}"),
        ("get", f"/runs/{HUGE}/trajectory?item=x"),
        ("get", f"/decl/{HUGE}"),
        ("post", f"/review/agent-text/{HUGE}"),
        ("post", f"/review/binding/{HUGE}"),
        ("post", f"/audit/{seeded.audit}/grade/{HUGE}"),
        ("get", "/node/123456"),
        # ids in range with no row: no such item (not a decision refused, 409)
        ("post", "/review/agent-text/9223372036854775807"),
        ("post", "/review/binding/9223372036854775807"),
        ("post", "/review/definition/9223372036854775807"),
    ):
        data = {"csrf_token": token, "decision": "reject", "reason": "x", "grade": "major"}
        r = c.post(path, data=data) if method == "post" else c.get(path)
        assert r.status_code == 404, path
        assert r.headers["content-type"].startswith("text/html") and 'id="error"' in r.text
        _has_headers(r)
    r = c.get("/search?k=5000&q=x")
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "k:" in r.text and "{" not in r.text.split('id="error"')[1][:80]
    _has_headers(r)


def test_a_server_error_is_a_page_with_the_headers(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(store, index_dir, secret="s")

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret detail")

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/boom")
    assert r.status_code == 500 and r.headers["content-type"].startswith("text/html")
    assert "secret detail" not in r.text and 'id="error"' in r.text
    _has_headers(r)


def test_every_search_hit_has_a_declaration_page(client) -> None:
    c, _, seeded = client
    html = c.get("/search?q=prime two").text
    ids = re.findall(r'href="/decl/(\d+)"', html)
    assert ids, "no declaration links"
    for mention_id in ids:
        r = c.get(f"/decl/{mention_id}")
        assert r.status_code == 200 and 'id="decl-statement"' in r.text
        assert 'id="decl-module"' in r.text and 'id="decl-pin"' in r.text
    r = c.get("/search?q=right angle dist")
    decl = re.search(r'href="/decl/(\d+)"[^>]*>[\w.]*dist_sq_eq_dist_sq_add_dist_sq_iff', r.text)
    page = c.get(f"/decl/{decl.group(1)}").text
    assert f'href="/node/{seeded.node_id}"' in page
    assert '<option value="mathlib" selected>' in r.text  # the library menu


def _api_routes(routes) -> list:
    """Every APIRoute, in included routers too."""
    from fastapi.routing import APIRoute

    out = []
    for route in routes:
        if isinstance(route, APIRoute):
            out.append(route)
        elif hasattr(route, "original_router"):  # FastAPI's included router
            out.extend(_api_routes(route.original_router.routes))
    return out


def _route_paths(app, value_of) -> list[tuple[str, str]]:
    """(method, path) of every route of the app with each path parameter filled by
    `value_of(annotation)`."""
    out = []
    for route in _api_routes(app.routes):
        if not route.dependant.path_params:
            continue
        path = route.path
        for p in route.dependant.path_params:
            path = path.replace("{" + p.name + "}", value_of(p.field_info.annotation))
        for method in sorted(route.methods - {"HEAD"}):
            out.append((method, path))
    return out


def test_every_id_beyond_64_bits_is_a_404_on_every_route(client) -> None:
    c, _, _ = client
    token = _sign_in(c)
    routes = _route_paths(c.app, lambda t: HUGE if t is int else "x")
    assert len([r for r in routes if HUGE in r[1]]) >= 8
    for method, path in routes:
        if HUGE not in path:
            continue
        data = {"csrf_token": token, "decision": "reject", "reason": "x", "grade": "major"}
        r = c.post(path, data=data) if method == "POST" else c.get(path)
        assert r.status_code == 404, (method, path, r.status_code)
        assert 'id="error"' in r.text
        _has_headers(r)
    assert c.get(f"/review?kind=binding&after={HUGE}").status_code == 422
    assert c.get("/review?kind=nonsense").status_code == 422


def test_head_is_answered_on_every_get_route(client) -> None:
    c, _, seeded = client
    routes = _api_routes(c.app.routes)
    assert len(routes) > 15
    for route in routes:
        if "GET" in route.methods:
            assert "HEAD" in route.methods, route.path
    _sign_in(c)
    for path in (
        "/",
        "/search?q=prime",
        f"/node/{seeded.node_id}",
        "/node?key=Q11518",
        "/decl/1",
        "/library/mathlib",
        "/runs",
        f"/runs/{seeded.run_id}",
        f"/runs/{seeded.run_id}/trajectory?item=item-c",
        "/audit",
        f"/audit/{seeded.audit}",
        "/login",
        "/review",
        f"/review/binding/{seeded.binding_id}",
        "/static-lean.css",
        "/static/app.css",
        "/node/999",
    ):
        got = c.get(path, follow_redirects=False)
        head = c.head(path, follow_redirects=False)
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        assert head.headers.get("content-type") == got.headers.get("content-type"), path
    assert c.head("/logout").status_code == 405  # a POST-only route


def test_the_queue_comes_a_page_at_a_time_and_by_kind(client) -> None:
    from math2.store import AgentText, ModelEntry
    from math2.web.queue import PAGE

    c, store, seeded = client
    with store.session() as s:
        model = s.scalar(select(ModelEntry))
        for i in range(PAGE + 5):
            s.add(
                AgentText(
                    kind="description" if i % 2 else "informal_statement",
                    body=f"queued text {i}",
                    node_id=seeded.node_id,
                    model_id=model.id,
                    template_id="t",
                    template_hash="h" * 64,
                )
            )
    _sign_in(c)
    first = c.get("/review").text
    ids = [int(x) for x in re.findall(r'id="agent-text-(\d+)"', first)]
    assert len(ids) == PAGE and ids == sorted(ids)
    nxt = re.search(r'id="next-agent-text" href="([^"]+)"', first)[1].replace("&amp;", "&")
    second = c.get(nxt).text
    more = [int(x) for x in re.findall(r'id="agent-text-(\d+)"', second)]
    assert more and min(more) > max(ids) and len(ids) + len(more) == PAGE + 6
    assert 'id="next-agent-text"' not in second
    only = c.get("/review?kind=description").text
    described = re.findall(r'id="agent-text-\d+".*?<strong>(\w+)</strong>', only, re.S)
    assert described and set(described) == {"description"}
    assert f'id="binding-{seeded.binding_id}"' not in only
    bindings = c.get("/review?kind=binding").text
    assert f'id="binding-{seeded.binding_id}"' in bindings and 'id="agent-text-' not in bindings


def test_a_docstring_is_rendered_as_markdown_on_its_pages(client) -> None:
    from math2.store import Mention

    c, store, seeded = client
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Nat.add_comm"))
        m.docstring = "Addition is **commutative**: $a + b = b + a$. <script>x()</script>"
        mention_id = m.id
    for path in (f"/decl/{mention_id}", f"/node/{seeded.xss_node_id}"):
        html = c.get(path).text
        assert "<strong>commutative</strong>" in html, path
        assert 'data-tex="a + b = b + a"' in html and "<script>x()" not in html, path
