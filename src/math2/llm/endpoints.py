"""One model served by several OpenAI-compatible endpoints: the calls balanced over them.

    [llm.endpoints."qwen-7b"]
    base_urls = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    concurrency = 16          # per base URL

`BalancingTransport` is an httpx transport under the ordinary `LLMClient`: each request goes to
the base URL with the fewest calls in flight (at most `concurrency` each); an endpoint that
refuses the connection, times out or answers 5xx/429 is taken out for `cooldown_s` (doubling
while it keeps failing) and the request goes to the next one; when every endpoint is out, the
request goes to the one that comes back first, and the client's own retries take over. A streamed
reply passes through as it arrives (the member's slot is held until the stream closes), so the
client's deadline keeps what was generated here too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import httpx

from math2.llm.cache import ResponseCache
from math2.llm.client import LLMClient
from math2.llm.types import Endpoint
from math2.util.limits import Resource

log = logging.getLogger(__name__)


@dataclass
class Member:
    """One base URL and its state."""

    base_url: str
    capacity: int
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    down_until: float = 0.0
    strikes: int = 0
    sem: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self.sem = asyncio.Semaphore(self.capacity)

    def up(self, now: float) -> bool:
        return now >= self.down_until


class BalancingTransport(httpx.AsyncBaseTransport):
    """Sends each request to one of several base URLs serving the same model."""

    def __init__(
        self,
        base_urls: list[str],
        concurrency: int = 8,
        *,
        cooldown_s: float = 30.0,
        max_cooldown_s: float = 600.0,
        inner: httpx.AsyncBaseTransport | None = None,
    ):
        if not base_urls:
            raise ValueError("a balanced endpoint needs at least one base URL")
        self.members = [Member(u.rstrip("/") + "/", concurrency) for u in base_urls]
        self.cooldown_s = cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self.inner = inner or httpx.AsyncHTTPTransport()

    @property
    def capacity(self) -> int:
        """Calls the endpoints take at once, all together."""
        return sum(m.capacity for m in self.members)

    def _pick(self, tried: set[int]) -> int:
        now = time.monotonic()
        fresh = [i for i in range(len(self.members)) if i not in tried]
        live = [i for i in fresh if self.members[i].up(now)] or fresh
        # The fewest calls in flight, then the fewest made (an endpoint back in gets its share).
        return min(live, key=lambda i: (self.members[i].in_flight, self.members[i].calls))

    def _down(self, m: Member, why: str) -> None:
        m.failures += 1
        m.strikes += 1
        wait = min(self.max_cooldown_s, self.cooldown_s * 2 ** (m.strikes - 1))
        m.down_until = time.monotonic() + wait
        log.warning("endpoint %s taken out for %.0fs: %s", m.base_url, wait, why)

    def _target(self, request: httpx.Request, m: Member) -> httpx.URL:
        # The client's base URL is the first member's; keep the part after it.
        first = httpx.URL(self.members[0].base_url)
        path = request.url.raw_path.decode()
        rest = path[len(first.raw_path.decode()) :] if path.startswith(first.path) else path
        return httpx.URL(m.base_url).join(rest.lstrip("/"))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        tried: set[int] = set()
        while True:
            i = self._pick(tried)
            m = self.members[i]
            tried.add(i)
            last = len(tried) == len(self.members)
            await m.sem.acquire()
            m.in_flight += 1
            m.calls += 1
            released = streamed = False

            def release(m: Member = m) -> None:
                nonlocal released
                if not released:
                    released = True
                    m.in_flight -= 1
                    m.sem.release()

            try:
                req = httpx.Request(
                    request.method,
                    self._target(request, m),
                    headers=request.headers,
                    content=body,
                    extensions=request.extensions,
                )
                try:
                    resp = await self.inner.handle_async_request(req)
                    streamed = resp.status_code == 200 and "text/event-stream" in resp.headers.get(
                        "content-type", ""
                    )
                    content = None if streamed else await resp.aread()
                except httpx.TransportError as exc:
                    self._down(m, f"{type(exc).__name__}: {exc}")
                    if last:
                        raise
                    continue
            finally:
                if not streamed:
                    release()
            if resp.status_code >= 500 or resp.status_code == 429:
                self._down(m, f"HTTP {resp.status_code}")
                if not last:
                    continue
            else:
                m.strikes = 0
                m.down_until = 0.0
            headers = [
                (k, v)
                for k, v in resp.headers.multi_items()
                if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
            ]
            if content is None:  # a streamed reply passes through; its slot ends with it
                return httpx.Response(200, headers=headers, stream=_Passing(resp, release))
            return httpx.Response(resp.status_code, headers=headers, content=content)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Passing(httpx.AsyncByteStream):
    """A member's streamed body, read through; the member's slot is released when it closes."""

    def __init__(self, resp: httpx.Response, release) -> None:
        self.resp, self.release = resp, release

    async def __aiter__(self):
        async for chunk in self.resp.aiter_bytes():  # decoded, as aread() would
            yield chunk

    async def aclose(self) -> None:
        try:
            await self.resp.aclose()
        finally:
            self.release()


def balanced_client(
    endpoint: Endpoint, base_urls: list[str], cache: ResponseCache | None = None
) -> LLMClient:
    """An `LLMClient` for `endpoint`'s model whose calls go to `base_urls`, `endpoint.concurrency`
    at once on each (so `len(base_urls)` × that in all)."""
    transport = BalancingTransport(base_urls, endpoint.concurrency)
    first = endpoint.model_copy(update={"base_url": base_urls[0]})
    limiter = Resource(f"model:{endpoint.model}", transport.capacity)
    return LLMClient(first, cache, limiter=limiter, transport=transport)
