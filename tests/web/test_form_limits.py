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
