"""A web form field over the one text limit (`math2.util.textlimit`) is refused with 413 and
the field named, before any handler sees it."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from math2.web import create_app
from tests.web.conftest import PASSWORD


def test_a_web_form_field_over_the_limit_is_refused(web_store) -> None:
    store, seeded, index_dir = web_store
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text).group(1)
        form = {"csrf_token": token, "username": "alice", "password": PASSWORD, "next": "/review"}
        page = c.post("/login", data=form).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        path = f"/review/agent-text/{seeded.agent_text_id}"
        # (Starlette itself refuses a field over 1 MB; under that, the one limit holds)
        body = "x" * 200_000
        r = c.post(path, data={"csrf_token": token, "decision": "edit", "body": body})
    assert r.status_code == 413
    assert "the form field &#39;body&#39; is 200,000 characters" in r.text, r.text[-800:]


def _token(text: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', text).group(1)


def _signed_in(c: TestClient) -> str:
    form = {"csrf_token": _token(c.get("/login").text), "username": "alice", "password": PASSWORD}
    assert c.post("/login", data=form, follow_redirects=False).status_code == 303
    return _token(c.get("/review").text)


def test_multipart_and_oversized_bodies_are_refused_before_any_temporary_file(
    web_store, tmp_path, monkeypatch
) -> None:
    import tempfile

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))  # where a spooled part would go
    store, seeded, index_dir = web_store
    big = b"x" * (3 * 1024 * 1024)  # past Starlette's 1 MB in-memory spool
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        token = _token(c.get("/login").text)
        fields = {"csrf_token": token, "username": "alice", "password": PASSWORD}
        # anonymous: a file part to the sign-in form, a file part with a wrong token
        r = c.post("/login", data=fields, files={"upload": ("a.bin", big)})
        assert r.status_code == 415 and "x-www-form-urlencoded" in r.text
        r = c.post("/logout", data={"csrf_token": "wrong"}, files={"f": ("b.bin", big)})
        assert r.status_code == 415
        # anonymous: an urlencoded body past the small cap, declared and chunked
        r = c.post("/login", data={**fields, "password": "p" * 20_000})
        assert r.status_code == 413
        r = c.post(
            "/login",
            content=(b"a=" + b"y" * 1024 for _ in range(64)),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 413
        # a signed-in reviewer's decision: urlencoded only, within the decision cap
        token = _signed_in(c)
        path = f"/review/agent-text/{seeded.agent_text_id}"
        r = c.post(path, data={"csrf_token": token, "decision": "reject"}, files={"f": ("c", big)})
        assert r.status_code == 415
        r = c.post(
            path,
            content=b"csrf_token=" + token.encode() + b"&body=" + b"z" * (4 * 1024 * 1024),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 413
        # the item is still pending: nothing was decided by any of them
        assert "agent-text/" + str(seeded.agent_text_id) in c.get("/review").text
    assert list(spool.iterdir()) == []
