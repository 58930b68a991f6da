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
                data={"csrf_token": _csrf(r.text), "decision": "confirm", "reason": "standard"},
            )
        r = c.post(
            f"/review/binding/{ids['binding']}",
            data={"csrf_token": _csrf(r.text), "decision": "confirm", "reason": "ok"},
        )
    with sqlite_store.session() as s:
        assert s.get(Binding, ids["binding"]).status == "confirmed"


def _signed_in(c, next_path: str) -> str:
    token = _csrf(c.get("/login").text)
    r = c.post(
        "/login",
        data={"csrf_token": token, "username": "ann", "password": PASSWORD, "next": next_path},
    )
    return r.text


def test_binding_page_asks_for_each_definition_first(sqlite_store, tmp_path):
    """K6.5 on the binding's own page: its check, each AI-library definition with a Confirm
    button, and Confirm for the binding off (with the reason) until each is confirmed."""
    ids = ai_library(sqlite_store)
    bid = ids["binding"]
    with sqlite_store.session() as s:
        s.get(Binding, bid).lean_check = {
            "passed": True,
            "reason": "ok",
            "compiled_by": "fake-repl · a test double, not Lean",
            "axioms": ["propext"],
            "type": "∀ (n : ℕ), 0 < AiLib.Foo n ∧ AiLib.Bar",
            "type_hash": "ab" * 16,
            "trust": "generated",
        }
    add_reviewer(sqlite_store, "ann", PASSWORD)
    with TestClient(create_app(sqlite_store, tmp_path / "index", secret="s")) as c:
        assert c.get(f"/review/binding/{bid}", follow_redirects=False).status_code == 303
        page = _signed_in(c, f"/review/binding/{bid}")
        assert f'id="ai-defs-{bid}"' in page and "test double" in page
        assert re.search(r'value="confirm" disabled title="[^"]*AiLib\.Foo, AiLib\.Bar', page)
        assert page.count('action="/review/definition/') == 2
        for key in ("foo", "bar"):
            r = c.post(
                f"/review/definition/{ids[key]}",
                data={
                    "csrf_token": _csrf(page),
                    "decision": "confirm",
                    "reason": "the standard definition",  # issue 42 §4: a reason is asked
                    "next": f"/review/binding/{bid}",
                },
            )
            page = r.text
            assert r.url.path == f"/review/binding/{bid}"  # back on the binding's page
        assert page.count('action="/review/definition/') == 0
        assert 'value="confirm">Confirm</button>' in page and 'id="why-not"' not in page
        r = c.post(
            f"/review/binding/{bid}",
            data={"csrf_token": _csrf(page), "decision": "confirm", "reason": "same result"},
        )
        assert r.status_code == 200
        page = c.get(f"/review/binding/{bid}").text
        assert 'id="binding-status">confirmed' in page and 'value="confirm"' not in page
        assert c.get("/review/binding/999999").status_code == 404


def test_unchecked_binding_cannot_be_confirmed_on_its_page(sqlite_store, tmp_path):
    ids = ai_library(sqlite_store)
    bid = ids["binding"]
    with sqlite_store.session() as s:
        s.get(Binding, bid).status = "proposed"
    add_reviewer(sqlite_store, "ann", PASSWORD)
    with TestClient(create_app(sqlite_store, tmp_path / "index", secret="s")) as c:
        page = _signed_in(c, f"/review/binding/{bid}")
        assert "Not checked by Lean yet" in page
        assert re.search(r'value="confirm" disabled title="it has not been checked by Lean', page)
        r = c.post(
            f"/review/binding/{bid}",
            data={"csrf_token": _csrf(page), "decision": "confirm", "reason": "ok"},
        )
        assert r.status_code == 409 and "not been checked by Lean" in r.text
    with sqlite_store.session() as s:
        assert s.get(Binding, bid).status == "proposed"
