"""Fixtures of the web tests: a seeded SQLite store, its search index, the app (in process, or a
live server), and signing in on it."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from math2.store import Store, open_store
from tests.web.seed import Seeded, seed

PASSWORD = "correct horse battery"


def _seeded(url: str, tmp_path: Path) -> tuple[Store, Seeded, Path]:
    from math2.retrieval.index import build_index
    from math2.web import add_reviewer

    store = open_store(url, migrate=True)
    seeded = seed(store)
    add_reviewer(store, "alice", PASSWORD)
    index_dir = tmp_path / "index"
    build_index(store, index_dir / "mathlib", "mathlib", dense=False)
    return store, seeded, index_dir


@pytest.fixture
def web_store(tmp_path: Path) -> Iterator[tuple[Store, Seeded, Path]]:
    """A migrated SQLite store with the seed corpus, a reviewer `alice`, and a BM25 index."""
    store, seeded, index_dir = _seeded(f"sqlite:///{tmp_path / 'math2.db'}", tmp_path)
    yield store, seeded, index_dir
    store.close()


@pytest.fixture
def any_web_store(store_url: str, tmp_path: Path) -> Iterator[tuple[Store, Seeded, Path]]:
    """The same on each backend (SQLite, and PostgreSQL where a test server is given)."""
    store, seeded, index_dir = _seeded(store_url, tmp_path)
    yield store, seeded, index_dir
    store.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(app) -> Iterator[str]:
    """`app` under uvicorn on a free port of 127.0.0.1, in a thread of this process (uvicorn's
    own proxy-header reading off, as `math2 serve` runs it); yields the base URL."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
            proxy_headers=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the web app did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def client_from(base: str, address: str, **kw) -> httpx.Client:
    """An HTTP client whose connections come from `address` (any of 127.0.0.0/8 on Linux), so
    that one test can be several peers."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, transport=transport, timeout=60, **kw)


@pytest.fixture
def live_server(web_store) -> Iterator[tuple[str, Store, Seeded]]:
    """The app under uvicorn on a free port of 127.0.0.1, in a thread of this process."""
    from math2.web import create_app

    store, seeded, index_dir = web_store
    with serving(create_app(store, index_dir, secret="test-secret")) as base:
        yield base, store, seeded


@pytest.fixture
def client(web_store):
    """The app in process (Starlette's `TestClient`) over the seeded store."""
    from math2.web import create_app

    store, seeded, index_dir = web_store
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        yield c, store, seeded


def _csrf(html: str) -> str:
    """The CSRF token of a page's form."""
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "no CSRF field on the page"
    return m.group(1)


def _sign_in(c: TestClient) -> str:
    """Sign alice in; the CSRF token of the page she lands on."""
    token = _csrf(c.get("/login").text)
    r = c.post(
        "/login",
        data={"csrf_token": token, "username": "alice", "password": PASSWORD, "next": "/review"},
    )
    assert r.status_code == 200 and "Signed in as" in r.text
    return _csrf(r.text)
