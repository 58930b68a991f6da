"""`math2 serve --uds PATH`: a unix socket only the proxy can open, and no TCP port at all.

The server runs as a user runs it (`python -m math2 … serve --uds`, its own process); the test
is the proxy: it connects through the socket and sends `X-Forwarded-For` as nginx's
`$proxy_add_x_forwarded_for` does (the client's own entries on the left, the proxy's on the
right)."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.web.conftest import PASSWORD


def _csrf(c: httpx.Client) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]


def _wrong(c: httpx.Client, client: str, n: int, forged: str = "") -> int:
    form = {"csrf_token": _csrf(c), "username": f"nobody-{n}", "password": "nope"}
    xff = f"{forged}, {client}" if forged else client
    return c.post("/login", data=form, headers={"x-forwarded-for": xff}).status_code


@pytest.fixture
def uds_server(web_store, tmp_path: Path):
    store, _, index_dir = web_store
    path = tmp_path / "run" / "math2.sock"
    path.parent.mkdir()
    path.write_text("")  # not a socket: refused, never removed
    cmd = [sys.executable, "-m", "math2", "--db", store.url, "serve", "--uds", str(path)]
    env = {**os.environ, "MATH2_RETRIEVAL__INDEX_DIR": str(index_dir)}
    refused = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "not a socket" in refused.stdout + refused.stderr
    assert path.read_text() == ""
    path.unlink()
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    client = httpx.Client(transport=httpx.HTTPTransport(uds=str(path)), base_url="http://math2")
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if client.get("/login").status_code == 200:
                    break
            except httpx.TransportError:
                assert proc.poll() is None, "math2 serve --uds exited"
                assert time.monotonic() < deadline, "math2 serve --uds did not start"
                time.sleep(0.3)
        yield proc, path, client
    finally:
        client.close()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def test_the_socket_is_the_only_way_in_and_the_proxy_names_the_client(uds_server) -> None:
    proc, path, c = uds_server
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o660
    # no TCP (nor UDP) socket at all: a TCP client has nothing to connect to
    assert psutil.Process(proc.pid).net_connections(kind="inet") == []
    # every peer of the socket is the proxy: the right-most X-Forwarded-For hop is the client,
    # whatever the client forged on the left; each client has its own budget of 10
    codes = [_wrong(c, "203.0.113.7", i, forged=f"198.51.100.{i}") for i in range(11)]
    assert codes == [401] * 10 + [429]
    assert _wrong(c, "203.0.113.8", 11) == 401  # another client behind the same proxy
    form = {"csrf_token": _csrf(c), "username": "alice", "password": PASSWORD}
    headers = {"x-forwarded-for": "203.0.113.7"}
    assert c.post("/login", data=form, headers=headers).status_code == 429  # .7 waits
    r = c.post("/login", data=form, headers={"x-forwarded-for": "203.0.113.9"})
    assert r.status_code == 303
