"""The app over HTTP without a browser: who may do what — sign-in, sessions, the trusted
proxy header, CSRF and origins, and which pages are cached (the pages and routes themselves:
`test_http.py`)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from math2.store import AgentText, Review, TextRecord
from math2.web import create_app
from tests.web.conftest import PASSWORD, _csrf, _sign_in


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
