"""The identity header behind a real nginx and a real Caddy, each run with the configuration
docs/web.md shows (only the listen address, the password file and the secret filled in): the
proxy's signed-in user decides as herself; a client's own X-Remote-User and secret headers are
replaced; a local process on the proxy's address without the secret names no one.

Skipped where nginx or Caddy is not installed (Debian: `apt-get install nginx-light caddy`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from math2.web import add_reviewer, create_app
from tests.web.conftest import PASSWORD, _free_port, client_from, serving

DOC = Path(__file__).resolve().parents[2] / "docs" / "web.md"
SECRET = "x9-" * 15
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
CADDY = shutil.which("caddy")


def _block(lang: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"\n( *)```{lang}\n(.*?)\n\1```", text, re.S)
    assert found, f"docs/web.md has no {lang} block"
    return textwrap.dedent(found[2])


@contextmanager
def _running(cmd: list[str], port: int, log: Path, **kw) -> Iterator[None]:
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, **kw)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{cmd[0]} did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(20)


def _app(web_store):
    store, _, index_dir = web_store
    add_reviewer(store, "bob", PASSWORD)
    store_ = store
    return create_app(
        store_,
        index_dir,
        secret="s",
        trusted_header="X-Remote-User",
        trusted_header_secret=SECRET,
        trusted_proxies=["loopback"],
    )


def _checks(front: str, app_base: str) -> None:
    """What the documented proxy sends is believed; what a client adds is not."""
    forged = {"x-remote-user": "alice", "x-math2-proxy-secret": SECRET}
    with httpx.Client(base_url=front, follow_redirects=False, timeout=30) as c:
        assert c.get("/review", auth=("alice", PASSWORD)).status_code == 200
        # bob signs in at the proxy and claims to be alice: the proxy replaces both headers
        r = c.get("/review", auth=("bob", PASSWORD), headers=forged)
        assert r.status_code == 200 and 'id="reviewer">bob<' in r.text
        assert c.get("/review", headers=forged).status_code == 401  # the proxy's own check
    # a local process on the proxy's address (loopback), straight to the server
    with client_from(app_base, "127.0.0.1", follow_redirects=False) as local:
        r = local.get("/review", headers={"x-remote-user": "alice"})
        assert r.status_code == 303
        r = local.get("/review", headers={**forged, "x-math2-proxy-secret": "guess" * 9})
        assert r.status_code == 303


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed")
def test_the_documented_nginx_configuration(web_store, tmp_path: Path) -> None:
    app = _app(web_store)
    (tmp_path / "htpasswd").write_text(f"alice:{{PLAIN}}{PASSWORD}\nbob:{{PLAIN}}{PASSWORD}\n")
    port = _free_port()
    with serving(app) as app_base:
        server = _block("nginx")
        server = re.sub(r"listen 443 ssl;", f"listen 127.0.0.1:{port};", server)
        server = re.sub(r"\n *ssl_certificate.*", "", server)
        server = server.replace("/etc/nginx/math2.htpasswd", str(tmp_path / "htpasswd"))
        server = server.replace("http://127.0.0.1:8000", app_base)
        server = server.replace("PROXY_SECRET", SECRET)
        conf = tmp_path / "nginx.conf"
        conf.write_text(
            f"daemon off;\nuser root;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/err.log;\n"
            "events {}\nhttp {\n"
            f"access_log off;\nclient_body_temp_path {tmp_path}/body;\n"
            f"proxy_temp_path {tmp_path}/proxy;\n{server}\n}}\n"
        )
        cmd = [str(NGINX), "-p", str(tmp_path), "-c", str(conf)]
        with _running(cmd, port, tmp_path / "nginx.log"):
            _checks(f"http://127.0.0.1:{port}", app_base)


@pytest.mark.skipif(CADDY is None, reason="Caddy is not installed")
def test_the_documented_caddy_configuration(web_store, tmp_path: Path) -> None:
    app = _app(web_store)
    hashed = subprocess.run(
        [str(CADDY), "hash-password", "--plaintext", PASSWORD],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = _free_port()
    with serving(app) as app_base:
        site = _block("caddy")
        site = site.replace("review.example.org", f"http://127.0.0.1:{port}", 1)
        site = site.replace("alice BCRYPT_HASH", f"alice {hashed}\n\t\tbob {hashed}")
        site = site.replace("127.0.0.1:8000", app_base.removeprefix("http://"))
        site = site.replace("PROXY_SECRET", SECRET)
        conf = tmp_path / "Caddyfile"
        conf.write_text("{\n\tadmin off\n}\n" + site + "\n")
        env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        cmd = [str(CADDY), "run", "--config", str(conf), "--adapter", "caddyfile"]
        with _running(cmd, port, tmp_path / "caddy.log", env=env):
            _checks(f"http://127.0.0.1:{port}", app_base)
