"""Forwarded headers and the identity header over real sockets: a real uvicorn on 127.0.0.1,
clients from several loopback addresses (127.0.0.2 plays the reverse proxy)."""

from __future__ import annotations

import re

import pytest

from math2.web import create_app
from math2.web.proxy import ProxyError, TrustedProxies
from math2.web.throttle import LoginThrottle
from tests.web.conftest import PASSWORD, client_from, serving

PROXY = "127.0.0.2"
SECRET = "s3cret-" * 6
SENT = {"x-math2-proxy-secret": SECRET}  # what the proxy adds


def _roomy() -> LoginThrottle:
    """Only the per-address budget counts (the names' budgets are out of the way)."""
    return LoginThrottle(name_burst=10_000)


def _tries(c, n: int, forwarded) -> list[int]:
    token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]
    codes = []
    for i in range(n):
        form = {"csrf_token": token, "username": f"guess{i}", "password": "wrong password"}
        codes.append(c.post("/login", data=form, headers={"x-forwarded-for": forwarded(i)}))
    return [r.status_code for r in codes]


def test_forwarded_for_from_an_untrusted_peer_is_ignored_by_the_throttle(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(store, index_dir, secret="s", login_throttle=_roomy())
    with serving(app) as base, client_from(base, "127.0.0.3") as c:
        # A new "address" each time, from a peer nobody named as a proxy: one address.
        codes = _tries(c, 12, lambda i: f"10.0.0.{i + 1}")
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]


def test_the_client_behind_a_trusted_proxy_is_the_first_untrusted_hop(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(store, index_dir, secret="s", trusted_proxies=[PROXY], login_throttle=_roomy())
    with serving(app) as base:
        with client_from(base, PROXY) as proxy:
            # Distinct clients behind the proxy: each has its own bucket.
            assert _tries(proxy, 12, lambda i: f"10.1.0.{i + 1}") == [401] * 12
            # A client that forges a hop on the left: the proxy appended the real one, on the
            # right, and that is whom the throttle counts.
            codes = _tries(proxy, 12, lambda i: f"10.9.9.{i + 1}, 10.1.1.5")
            assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
        # The same header from a peer that is not the proxy: ignored, the peer is the client.
        with client_from(base, "127.0.0.4") as other:
            codes = _tries(other, 11, lambda i: f"10.2.0.{i + 1}")
            assert codes[:10] == [401] * 10 and codes[10] == 429


def _review(c, **headers: str) -> int:
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    return c.get("/review", headers=sent, follow_redirects=False).status_code


def test_the_identity_header_counts_only_from_the_proxy_itself(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(
        store,
        index_dir,
        secret="s",
        trusted_header="X-Remote-User",
        trusted_header_secret=SECRET,
        trusted_proxies=[PROXY],
    )
    with serving(app) as base:
        with client_from(base, "127.0.0.1") as local:
            # Any local process, whatever it says it forwards: not the proxy.
            assert _review(local, x_remote_user="alice") == 303
            assert _review(local, x_remote_user="alice", x_forwarded_for="10.0.0.5") == 303
            assert _review(local, x_remote_user="alice", x_forwarded_for=PROXY) == 303
        with client_from(base, "127.0.0.1", headers=SENT) as local:
            # A local process not on the proxy's address, even with the secret: not believed;
            # one on the proxy's address without the secret: not believed either.
            assert _review(local, x_remote_user="alice") == 303
        with client_from(base, PROXY) as impostor:
            assert _review(impostor, x_remote_user="alice") == 303
        with client_from(base, PROXY, headers=SENT) as proxy:
            # The proxy, which appends the client's address and adds the secret: believed.
            assert _review(proxy, x_remote_user="alice", x_forwarded_for="10.0.0.5") == 200
            assert _review(proxy, x_remote_user="alice") == 200
            assert _review(proxy, x_remote_user="mallory", x_forwarded_for="10.0.0.5") == 303
            assert _review(proxy, x_forwarded_for="10.0.0.5") == 303  # no header: no one


def test_a_loopback_proxy_that_sets_forwarded_for_is_believed(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(
        store,
        index_dir,
        secret="s",
        trusted_header="X-Remote-User",
        trusted_header_secret=SECRET,
        trusted_proxies=["loopback"],
    )
    with serving(app) as base:
        with client_from(base, "127.0.0.1") as local:  # loopback alone names no one
            assert _review(local, x_remote_user="alice", x_forwarded_for="192.0.2.7") == 303
        with client_from(base, "127.0.0.1", headers=SENT) as proxy:
            assert _review(proxy, x_remote_user="alice", x_forwarded_for="192.0.2.7") == 200
        with client_from(
            base, "127.0.0.5", headers=SENT
        ) as other:  # loopback is 127.0.0.1 and ::1 only
            assert _review(other, x_remote_user="alice", x_forwarded_for="192.0.2.7") == 303


def test_a_signed_in_reviewer_behind_the_proxy_signs_in_as_herself(web_store) -> None:
    store, _, index_dir = web_store
    app = create_app(store, index_dir, secret="s", trusted_proxies=[PROXY])
    with serving(app) as base, client_from(base, PROXY) as proxy:
        fwd = {"x-forwarded-for": "10.3.0.1", "x-forwarded-proto": "http"}
        token = re.search(
            r'name="csrf_token" value="([^"]+)"', proxy.get("/login", headers=fwd).text
        )[1]
        form = {"csrf_token": token, "username": "alice", "password": PASSWORD}
        r = proxy.post("/login", data=form, headers=fwd, follow_redirects=False)
        assert r.status_code == 303
    assert app.state.login_throttle.is_known("10.3.0.1", "alice")
    assert not app.state.login_throttle.is_known(PROXY, "alice")


@pytest.mark.parametrize(
    "value", ["not-an-ip", "10.0.0.1/8", "300.1.1.1", "", "example.com", "10.0.0.0/33"]
)
def test_a_bad_proxy_address_is_refused(value: str) -> None:
    with pytest.raises(ProxyError, match="--trust-proxy"):
        TrustedProxies.parse([value])


def test_proxies_are_addresses_and_networks() -> None:
    t = TrustedProxies.parse(["10.0.0.0/24", "::1", "192.0.2.9", "loopback"])
    assert "10.0.0.77" in t and "10.0.1.1" not in t and "192.0.2.9" in t
    assert "127.0.0.1" in t and "::1" in t and "127.0.0.2" not in t
    assert "testclient" not in t and None not in t
    assert not TrustedProxies.parse([])


def test_one_peer_with_forwarding_headers_and_no_trusted_proxy_is_warned_of(
    web_store, caplog
) -> None:
    from fastapi.testclient import TestClient

    store, _, index_dir = web_store
    caplog.set_level("WARNING", logger="math2.web.proxy")
    quiet = create_app(store, index_dir, secret="s")
    with TestClient(quiet, client=("127.0.0.1", 1)) as c:  # one peer, no proxy's headers
        for _ in range(25):
            c.get("/")
    assert not caplog.records
    proxied = create_app(store, index_dir, secret="s")
    with TestClient(proxied, client=("10.0.0.2", 1)) as c:
        for i in range(25):
            c.get("/", headers={"x-forwarded-for": f"192.0.2.{i}"})
    assert len(caplog.records) == 1 and "--trust-proxy" in caplog.records[0].getMessage()
    named = create_app(store, index_dir, secret="s", trusted_proxies=["10.0.0.2"])
    with TestClient(named, client=("10.0.0.2", 1)) as c:
        for i in range(25):
            c.get("/", headers={"x-forwarded-for": f"192.0.2.{i}"})
    assert len(caplog.records) == 1  # named: no warning
