"""The review page shows an AI-library binding's definitions; each is confirmed before it."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from math2.store.models import Binding
from math2.web import add_reviewer, create_app
from tests.roles.align.fixture import ai_library

PASSWORD = "correct horse battery staple"


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def test_definitions_shown_and_confirmed_first(sqlite_store, tmp_path):
    ids = ai_library(sqlite_store)
    add_reviewer(sqlite_store, "ann", PASSWORD)
    with TestClient(create_app(sqlite_store, tmp_path / "index", secret="s")) as c:
        token = _csrf(c.get("/login").text)
        r = c.post(
            "/login",
            data={"csrf_token": token, "username": "ann", "password": PASSWORD, "next": "/review"},
        )
        page = r.text
        assert f'id="ai-defs-{ids["binding"]}"' in page
        assert "AiLib.Foo" in page and "AiLib.Bar" in page
        token = _csrf(page)
        r = c.post(
            f"/review/binding/{ids['binding']}",
            data={"csrf_token": token, "decision": "confirm", "reason": "ok"},
        )
        assert "AiLib.Foo" in r.text  # refused, naming the definitions
        for key in ("foo", "bar"):
            r = c.post(
                f"/review/definition/{ids[key]}",
                data={"csrf_token": _csrf(r.text), "decision": "confirm"},
            )
        r = c.post(
            f"/review/binding/{ids['binding']}",
            data={"csrf_token": _csrf(r.text), "decision": "confirm", "reason": "ok"},
        )
    with sqlite_store.session() as s:
        assert s.get(Binding, ids["binding"]).status == "confirmed"
