"""The web app never runs SQL on the event loop: every store session of every form (sign-in,
sign-out, review, binding, grade, refusals, error pages) is opened from a worker thread."""

from __future__ import annotations

import asyncio
import re
from contextlib import contextmanager

from fastapi.testclient import TestClient

from math2.web import create_app
from tests.web.conftest import PASSWORD


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "no CSRF field on the page"
    return m.group(1)


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def test_no_form_runs_sql_on_the_event_loop(web_store, monkeypatch) -> None:
    store, seeded, index_dir = web_store
    sessions, on_loop = [], []
    real = store.session

    @contextmanager
    def watched():
        sessions.append(1)
        if _on_loop():
            on_loop.append(1)
        with real() as s:
            yield s

    monkeypatch.setattr(store, "session", watched)
    with TestClient(create_app(store, index_dir, secret="s"), client=("10.0.0.9", 1)) as c:
        token = _csrf(c.get("/login").text)
        wrong = {"csrf_token": token, "username": "alice", "password": "nope"}
        assert c.post("/login", data=wrong).status_code == 401
        assert c.post("/login", data={**wrong, "csrf_token": "x"}).status_code == 403
        r = c.post("/login", data={**wrong, "password": PASSWORD, "next": "/review"})
        assert r.status_code == 200 and "Signed in as alice" in r.text
        token = _csrf(r.text)
        path = f"/review/agent-text/{seeded.agent_text_id}"
        r = c.post(path, data={"csrf_token": token, "decision": "maybe"})
        assert r.status_code == 409 and "Choose confirm, reject or edit." in r.text
        r = c.post(path, data={"csrf_token": token, "decision": "confirm", "reason": "ok"})
        assert r.status_code == 200 and "confirm (confirmed)" in r.text
        r = c.post(path, data={"csrf_token": token, "decision": "confirm", "reason": "again"})
        assert r.status_code == 409  # decided already: refused, the queue again
        b = f"/review/binding/{seeded.binding_id}"
        r = c.post(b, data={"csrf_token": token, "decision": "maybe"})
        assert r.status_code == 409 and "Choose confirm or reject." in r.text
        r = c.post(b, data={"csrf_token": token, "decision": "reject", "reason": "no"})
        assert r.status_code == 200 and f"Binding {seeded.binding_id}: reject." in r.text
        g = f"/audit/{seeded.audit}/grade/{seeded.sample_ids[0]}"
        r = c.post(g, data={"csrf_token": token, "grade": "correct", "reason": ""})
        assert r.status_code == 200 and "graded correct" in r.text
        r = c.post(g, data={"csrf_token": token, "grade": "bogus"})
        assert r.status_code == 200
        r = c.post("/review/definition/999999", data={"csrf_token": token})
        assert r.status_code == 404 and "Definition 999999" in r.text  # no such declaration
        assert c.post("/logout", data={"csrf_token": token}).status_code == 200
        assert c.post(path, data={"csrf_token": token}).status_code == 403  # signed out
    assert len(sessions) > 15 and not on_loop
