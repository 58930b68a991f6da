"""The app over HTTP without a browser: pages answer, access rules and CSRF hold."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from math2.store import AgentText, Review, TextRecord
from math2.web import create_app
from tests.web.conftest import PASSWORD


@pytest.fixture
def client(web_store):
    store, seeded, index_dir = web_store
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        yield c, store, seeded


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "no CSRF field on the page"
    return m.group(1)


def _sign_in(c: TestClient) -> str:
    token = _csrf(c.get("/login").text)
    r = c.post(
        "/login",
        data={"csrf_token": token, "username": "alice", "password": PASSWORD, "next": "/review"},
    )
    assert r.status_code == 200 and "Signed in as" in r.text
    return _csrf(r.text)


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


def test_session_cookie_is_httponly_and_samesite(client) -> None:
    c, _, _ = client
    r = c.get("/login")
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_review_needs_a_reviewer_and_a_csrf_token(client) -> None:
    c, store, seeded = client
    path = f"/review/agent-text/{seeded.agent_text_id}"
    form = {"decision": "confirm", "reason": "looks right"}
    assert c.get("/review", follow_redirects=False).status_code == 303  # to the sign-in page
    assert c.post(path, data=form).status_code == 403  # anonymous, no token
    anon = _csrf(c.get("/login").text)
    assert c.post(path, data={**form, "csrf_token": anon}).status_code == 403  # anonymous
    assert (
        c.post(
            f"/audit/{seeded.audit}/grade/{seeded.sample_ids[0]}",
            data={"grade": "correct", "csrf_token": anon},
        ).status_code
        == 403
    )
    token = _sign_in(c)
    assert c.post(path, data=form).status_code == 403  # signed in, no token
    assert c.post(path, data={**form, "csrf_token": "forged"}).status_code == 403
    r = c.post(path, data={**form, "csrf_token": token}, headers={"origin": "https://evil.example"})
    assert r.status_code == 403
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "pending"
        assert s.scalar(select(Review)) is None
    r = c.post(path, data={**form, "csrf_token": token})
    assert r.status_code == 200 and "confirm (confirmed)" in r.text
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "confirmed"


def test_login_rejects_a_wrong_password_and_foreign_redirects(client) -> None:
    c, _, _ = client
    token = _csrf(c.get("/login").text)
    r = c.post("/login", data={"csrf_token": token, "username": "alice", "password": "nope"})
    assert r.status_code == 401
    r = c.post(
        "/login",
        data={
            "csrf_token": token,
            "username": "alice",
            "password": PASSWORD,
            "next": "//evil.example/",
        },
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/review"


SECRET = "p" * 40  # the proxy's secret in these tests


def test_trusted_header_only_when_configured(web_store) -> None:
    store, _, index_dir = web_store
    local = ("127.0.0.1", 40000)
    with TestClient(create_app(store, index_dir, secret="s"), client=local) as c:
        assert (
            c.get("/review", headers={"x-user": "alice"}, follow_redirects=False).status_code == 303
        )
    with pytest.raises(ValueError, match="proxy's secret"):  # loopback alone never suffices
        create_app(store, index_dir, trusted_header="X-User", trusted_proxies=["loopback"])
    app = create_app(
        store,
        index_dir,
        secret="s",
        trusted_header="X-User",
        trusted_header_secret=SECRET,
        trusted_proxies=["loopback"],
    )
    proxied = {"x-math2-proxy-secret": SECRET}
    with TestClient(app, client=local) as c:
        assert c.get("/review", headers={"x-user": "alice", **proxied}).status_code == 200
        r = c.get("/review", headers={"x-user": "mallory", **proxied}, follow_redirects=False)
        assert r.status_code == 303
        # A local process on the proxy's address, without the secret or with a wrong one
        for sent in ({}, {"x-math2-proxy-secret": SECRET[:-1] + "q"}, {"x-math2-proxy-secret": ""}):
            r = c.get("/review", headers={"x-user": "alice", **sent}, follow_redirects=False)
            assert r.status_code == 303, sent
    # From an address that is not a trusted proxy, even with the secret: ignored.
    with TestClient(app, client=("10.0.0.7", 40000)) as c:
        r = c.get("/review", headers={"x-user": "alice", **proxied}, follow_redirects=False)
        assert r.status_code == 303


def _login(c: TestClient, password: str, username: str = "alice") -> int:
    token = _csrf(c.get("/login").text)
    form = {"csrf_token": token, "username": username, "password": password}
    return c.post("/login", data=form, follow_redirects=False).status_code


def test_wrong_passwords_slow_the_guesser_not_the_reviewer(web_store) -> None:
    from math2.web import add_reviewer

    store, _, index_dir = web_store
    add_reviewer(store, "bob", PASSWORD)
    app = create_app(store, index_dir, secret="s")
    with TestClient(app, client=("10.0.0.5", 1)) as alice:
        assert _login(alice, PASSWORD) == 303  # her address, known from now on
    with TestClient(app, client=("10.0.0.66", 1)) as attacker:
        codes = [_login(attacker, "wrong password") for _ in range(6)]
        assert codes[:5] == [401] * 5 and codes[5] == 429  # the name's budget of 5
        assert _login(attacker, PASSWORD) == 429  # the guessing address waits, even when right
        r = attacker.post("/login", data={"csrf_token": "x", "username": "alice"})
        assert r.status_code == 403
    # The real reviewer, from her own address, signs in although her name was guessed at;
    # another reviewer from a new address too (the flood was against alice's name only).
    with TestClient(app, client=("10.0.0.5", 1)) as alice:
        assert _login(alice, PASSWORD) == 303
        assert alice.get("/review").status_code == 200
    with TestClient(app, client=("10.0.0.9", 1)) as bob:
        assert _login(bob, PASSWORD, "bob") == 303
    # One address cannot go on guessing new names either: its budget runs dry.
    with TestClient(app, client=("10.0.0.67", 1)) as other:
        codes = [_login(other, "wrong password", f"user{i}") for i in range(12)]
        assert codes.count(401) == 10 and codes[-1] == 429


def test_confirm_refuses_a_changed_text(client) -> None:
    c, store, seeded = client
    token = _sign_in(c)
    r = c.post(
        f"/review/agent-text/{seeded.agent_text_id}",
        data={"csrf_token": token, "decision": "confirm", "reason": "ok", "body": "changed"},
    )
    assert "save it as an edit" in r.text
    r = c.post(
        f"/review/agent-text/{seeded.agent_text_id}",
        data={"csrf_token": token, "decision": "edit", "reason": "tidier", "body": "A\r\nB"},
    )
    assert "edit (confirmed)" in r.text
    with store.session() as s:
        text = s.scalar(select(TextRecord).where(TextRecord.node_id == seeded.node_id))
        assert text.body == "A\nB"


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


def test_origin_null_is_refused_and_the_queue_is_not_cached(client) -> None:
    c, store, seeded = client
    token = _sign_in(c)
    form = {"csrf_token": token, "decision": "reject", "reason": "no"}
    r = c.post(f"/review/agent-text/{seeded.agent_text_id}", data=form, headers={"origin": "null"})
    assert r.status_code == 403
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "pending"
    assert c.get("/review").headers["cache-control"] == "no-store"
    assert c.get("/login").headers["cache-control"] == "no-store"


def test_a_signed_in_reviewers_pages_are_not_cached(client) -> None:
    c, _, seeded = client
    assert "cache-control" not in c.get(f"/node/{seeded.node_id}").headers  # anonymous
    _sign_in(c)
    for path in ("/", f"/node/{seeded.node_id}", "/runs"):
        r = c.get(path)
        assert r.headers["cache-control"] == "no-store", path
        assert "default-src 'self'" in r.headers["content-security-policy"], path


def test_the_cached_sign_in_page_is_the_template_s(client, monkeypatch) -> None:
    """The sign-in page an anonymous visitor gets (and the 401 of a wrong password) is filled
    into `login.html` rendered once: the same bytes as the full render, escaping included."""
    from math2.web import signin

    c, _, _ = client
    target = '/search?q="<b>"&x=1'
    cached = c.get("/login", params={"next": target})
    token = _csrf(cached.text)
    form = {"csrf_token": token, "username": "nobody", "password": "nope", "next": target}
    cached_401 = c.post("/login", data=form)
    assert cached.status_code == 200 and cached_401.status_code == 401
    assert 'value="/search?q=&#34;&lt;b&gt;&#34;&amp;x=1"' in cached.text
    assert "Wrong name or password." in cached_401.text
    monkeypatch.setattr(signin, "_cached_page_fits", lambda request: False)
    full = c.get("/login", params={"next": target})
    full_401 = c.post("/login", data=form)
    assert (full.status_code, full_401.status_code) == (200, 401)
    assert cached.text == full.text and cached_401.text == full_401.text
    assert cached.headers["content-type"] == full.headers["content-type"]


def test_sign_out_a_new_password_and_deactivation_end_sessions(client) -> None:
    from math2.web import add_reviewer
    from math2.web.accounts import deactivate_reviewer

    c, store, _ = client
    for end in ("sign-out", "new password", "deactivate"):
        token = _sign_in(c)
        copied = dict(c.cookies)
        if end == "sign-out":
            assert c.post("/logout", data={"csrf_token": token}).status_code == 200
        elif end == "new password":
            add_reviewer(store, "alice", PASSWORD)
        else:
            deactivate_reviewer(store, "alice")
        with TestClient(c.app, cookies=copied) as replay:
            assert replay.get("/review", follow_redirects=False).status_code == 303, end
            r = replay.post(
                f"/review/binding/{2}",
                data={"csrf_token": token, "decision": "reject", "reason": "replayed"},
            )
            assert r.status_code == 403, end
        add_reviewer(store, "alice", PASSWORD)  # reactivated for the next round
    with store.session() as s:
        assert s.scalar(select(Review)) is None


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


def test_a_restart_keeps_the_sessions(web_store) -> None:
    store, _, index_dir = web_store
    with TestClient(create_app(store, index_dir)) as c:
        assert _login(c, PASSWORD) == 303
        cookies = dict(c.cookies)
    # the server again (a new app over the store, no secret given): the cookie still opens
    with TestClient(create_app(store, index_dir), cookies=cookies) as again:
        assert again.get("/review", follow_redirects=False).status_code == 200
    with TestClient(create_app(store, index_dir, secret="another key"), cookies=cookies) as other:
        assert other.get("/review", follow_redirects=False).status_code == 303


def test_a_decision_from_an_ended_session_keeps_the_text_and_says_what_to_do(client) -> None:
    from math2.store import WebSession

    c, store, seeded = client
    token = _sign_in(c)
    with store.session() as s:  # the session ends (expired, signed out elsewhere)
        s.execute(WebSession.__table__.delete())
    path = f"/review/agent-text/{seeded.agent_text_id}"
    edit = {"csrf_token": token, "decision": "edit", "body": "My careful <edit> of $x^2$"}
    r = c.post(path, data={**edit, "reason": "clearer & shorter", "back": "/review"})
    assert r.status_code == 403 and "Your session has ended" in r.text
    assert "My careful &lt;edit&gt; of $x^2$</textarea>" in r.text
    assert 'value="clearer &amp; shorter"' in r.text and 'href="/login?next=/review"' in r.text
    kept_token = _csrf(r.text)
    # signed in again (elsewhere): the kept form's token is from before, so it comes back once
    # more with this session's token, and then it is taken
    _sign_in(c)
    again = {**edit, "csrf_token": kept_token, "reason": "clearer & shorter"}
    r = c.post(path, data=again, follow_redirects=False)
    assert r.status_code == 403 and "from before you signed in again" in r.text
    assert "My careful &lt;edit&gt; of $x^2$</textarea>" in r.text
    r = c.post(path, data={**again, "csrf_token": _csrf(r.text)}, follow_redirects=False)
    assert r.status_code == 303
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "edited"
