"""Who is on the other end: the socket peer, the trusted proxies, and the client address.

`--trust-proxy` names the reverse proxies (addresses or networks, checked with `ipaddress`;
`loopback` is 127.0.0.1 and ::1). Nothing else is believed:

- `X-Forwarded-For` and `X-Forwarded-Proto` are read only from a trusted peer, by uvicorn's
  `ProxyHeadersMiddleware` inside the app (uvicorn's own proxy handling is off, so its default
  trust of 127.0.0.1 never applies); the client is then the first untrusted hop from the right
  of `X-Forwarded-For`. That address is what the sign-in throttle counts.
- The trusted identity header (`--trusted-header`) is read only when the socket peer itself is a
  trusted proxy, whatever `X-Forwarded-For` says: `PeerRecorder` keeps the socket peer before
  the proxy headers replace the client.
- `--uds PATH` (a unix socket only the proxy can open, `TrustedProxies.unix_socket`): every peer
  is the proxy. A peer of the socket has no address; `PeerRecorder` names it `UNIX_PEER`, a
  trusted proxy, so its `X-Forwarded-For` gives the client (the right-most hop, the one the
  proxy wrote) and its identity header counts (with the secret, as over TCP).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from math2.errors import Math2Error

log = logging.getLogger(__name__)
PEER_KEY = "math2.peer"  # the socket peer's address in the ASGI scope
LOOPBACK = ("127.0.0.1", "::1")
UNIX_PEER = "unix-socket"  # the peer of a `--uds` socket: the proxy (it has no address)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ProxyError(Math2Error):
    """A `--trust-proxy` value that is not an address or a network."""


def _network(value: str) -> list[Network]:
    text = value.strip()
    if text == "loopback":
        return [ipaddress.ip_network(a) for a in LOOPBACK]
    try:
        return [ipaddress.ip_network(text, strict=True)]
    except ValueError as exc:
        raise ProxyError(
            f"--trust-proxy {value!r} is not an IP address or network ({exc}); give an address "
            "(10.0.0.5, ::1), a network (10.0.0.0/24) or 'loopback'"
        ) from None


@dataclass(frozen=True)
class TrustedProxies:
    """The peers whose forwarded headers (and identity header) are believed."""

    networks: tuple[Network, ...] = ()
    unix_socket: bool = False  # listening on a unix socket only the proxy can open (`--uds`)

    @classmethod
    def parse(cls, values: Iterable[str], unix_socket: bool = False) -> TrustedProxies:
        """From `--trust-proxy` values; ProxyError names a bad one."""
        nets: list[Network] = []
        for v in values:
            nets.extend(n for n in _network(v) if n not in nets)
        return cls(tuple(nets), unix_socket)

    def __bool__(self) -> bool:
        return bool(self.networks) or self.unix_socket

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str):
            return False
        if host == UNIX_PEER:
            return self.unix_socket
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False  # a unix socket, a test client's name: never a proxy
        return any(ip in n for n in self.networks)

    def as_strings(self) -> list[str]:
        """The networks (and `UNIX_PEER`, a literal) as uvicorn's `forwarded_allow_ips` takes
        them."""
        return [str(n) for n in self.networks] + ([UNIX_PEER] if self.unix_socket else [])


FORWARDING = (b"x-forwarded-for", b"forwarded", b"x-real-ip")
ONE_PEER_AFTER = 20  # requests


class PeerRecorder:
    """The outermost middleware: keeps the socket peer in the scope (`PEER_KEY`) before any
    proxy header can change the client. Without trusted proxies (`watch`), it warns once when
    the first `ONE_PEER_AFTER` requests all came from one peer and some carried a forwarding
    header: a proxy nobody named, so every client shares that peer's sign-in budget."""

    def __init__(self, app: ASGIApp, watch: bool = False, unix_peer: bool = False) -> None:
        self.app = app
        self.watch = watch
        self.unix_peer = unix_peer  # a peer without an address is the `--uds` socket's proxy
        self._peers: set[str | None] = set()
        self._seen = 0
        self._forwarded = False

    def _look(self, scope: Scope, peer_: str | None) -> None:
        self._seen += 1
        self._peers.add(peer_)
        if len(self._peers) > 1:
            self.watch = False
            return
        self._forwarded = self._forwarded or any(k in FORWARDING for k, _ in scope["headers"])
        if self._seen >= ONE_PEER_AFTER:
            self.watch = False
            if self._forwarded:
                log.warning(
                    "the first %d requests all came from %s with forwarding headers, and no "
                    "--trust-proxy is set: math2 seems to be behind a proxy it does not know, so "
                    "every client shares one sign-in budget (a few wrong passwords lock the team "
                    "out). Name the proxy with --trust-proxy ADDRESS.",
                    self._seen,
                    peer_,
                )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            if client is None and self.unix_peer:
                client = scope["client"] = (UNIX_PEER, 0)
            scope[PEER_KEY] = client[0] if client else None
            if self.watch:
                self._look(scope, scope[PEER_KEY])
        await self.app(scope, receive, send)


def peer(request: Request) -> str | None:
    """The address of the socket's other end (a proxy, when there is one)."""
    if PEER_KEY in request.scope:
        value = request.scope[PEER_KEY]
        return value if isinstance(value, str) else None
    return request.client.host if request.client else None


def from_trusted_proxy(request: Request) -> bool:
    """Whether the socket peer is a trusted proxy (the only peer whose identity header counts)."""
    trusted: TrustedProxies = request.app.state.trusted_proxies
    return peer(request) in trusted


def client_address(request: Request) -> str:
    """The client's address: the socket peer, or behind a trusted proxy the first untrusted
    hop of `X-Forwarded-For` from the right."""
    return request.client.host if request.client else "?"
