"""One async client for OpenAI-compatible chat endpoints.

Concurrency is bounded by a `Resource` (the endpoint's slots); 429, 5xx, malformed bodies and
connection errors are retried with exponential backoff (honouring `Retry-After`), each failed try
kept with its error; replies are streamed (server-sent events), so a deadline derived from the
call's token budget and the endpoint's measured speed keeps what was generated (`finish_reason`
"timeout") rather than losing it; every reply is put in the response cache before it is returned,
keyed by model + parameters + messages + sample index (+ round), so pass@k samples differ and a
rerun repeats no finished call.

An endpoint that could not be reached on `down_after` calls in a row (every try of each failed to
connect) is down for the client: that call and every later one raise `EndpointDown` at once,
naming the endpoint, so a run stops early instead of retrying each of its items in turn. A call
that got any answer from the server resets the count.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from typing import Any

import httpx

from math2.llm.cache import MemoryCache, ResponseCache
from math2.llm.stream import TIMEOUT, SpeedModel, StreamState, sse_lines
from math2.llm.types import (
    ChatResponse,
    Endpoint,
    EndpointDown,
    FailedTry,
    LLMError,
    Usage,
    cache_key,
)
from math2.util.limits import Resource

log = logging.getLogger(__name__)

# Sampling parameters that go into the request body and the cache key.
PARAMS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "max_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "logprobs",
    "top_logprobs",
)
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)


class LLMClient:
    """`await client.chat(messages, sample=i, temperature=…)` → `ChatResponse`."""

    def __init__(
        self,
        endpoint: Endpoint,
        cache: ResponseCache | None = None,
        *,
        limiter: Resource | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.endpoint = endpoint
        self.cache: ResponseCache = cache if cache is not None else MemoryCache()
        self.limiter = limiter or Resource(f"model:{endpoint.model}", endpoint.concurrency)
        self.usage = Usage()
        # the endpoint's measured speed, from which each call's deadline is derived
        self.speed = SpeedModel(floor_s=endpoint.timeout_floor_s, cap_s=endpoint.timeout_s)
        # calls in a row that could not connect, and why the endpoint is down once it is
        self.unreachable_calls = 0
        self.down_reason: str | None = None
        self._down_count = 0  # the calls in a row that made it down
        headers = {"Content-Type": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self._http = httpx.AsyncClient(
            base_url=endpoint.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(endpoint.timeout_s, connect=min(10.0, endpoint.timeout_s)),
            transport=transport,
        )

    @property
    def model(self) -> str:
        """The model this client talks to."""
        return self.endpoint.model

    @property
    def down(self) -> bool:
        """Whether the endpoint is down for this client (every call raises `EndpointDown`)."""
        return self.down_reason is not None

    def _refuse_if_down(self, tries: list[FailedTry] | None = None) -> None:
        if self.down_reason is not None:
            self.usage.failures += 1
            raise EndpointDown(
                self.down_reason,
                base_url=self.endpoint.base_url,
                consecutive=self._down_count,
            ).with_tries(tries or [])

    def _unreachable(self, tries: list[FailedTry]) -> None:
        """Count a call that could not connect on any try; the endpoint is down at the limit."""
        self.unreachable_calls += 1
        limit = self.endpoint.down_after
        if limit and self.unreachable_calls >= limit and self.down_reason is None:
            self._down_count = self.unreachable_calls
            self.down_reason = (
                f"the endpoint {self.endpoint.base_url} (model {self.model}) is down: "
                f"{self.unreachable_calls} calls in a row could not connect (last: "
                f"{tries[-1].error}); no more calls go to it (llm.down_after = {limit})"
            )
            log.warning("%s", self.down_reason)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def request_for(
        self,
        messages: list[dict[str, Any]],
        sample: int = 0,
        round: int | None = None,
        **params: Any,
    ) -> tuple[str, dict[str, Any]]:
        """(cache key, request body) for a call; `seed`, when given, is offset by the sample."""
        unknown = set(params) - set(PARAMS)
        if unknown:
            raise ValueError(f"unknown sampling parameters: {', '.join(sorted(unknown))}")
        used = {k: v for k, v in params.items() if v is not None}
        if "seed" in used:
            used["seed"] = int(used["seed"]) + sample
        msgs = [dict(m) for m in messages]
        key = cache_key(self.model, used, msgs, sample, round)
        body = {"model": self.model, "messages": msgs, **used}
        return key, body

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        sample: int = 0,
        round: int | None = None,
        **params: Any,
    ) -> ChatResponse:
        """One completion; from the cache when this exact call was made before."""
        key, body = self.request_for(messages, sample, round, **params)
        hit = await self.cache.get(key)
        if hit is not None:
            self.usage.calls += 1
            self.usage.cached_calls += 1
            return hit.model_copy(update={"cached": True})
        self._refuse_if_down()
        async with self.limiter.slot():  # a call holds its slot until its reply is stored
            self._refuse_if_down()  # the endpoint went down while this call waited
            resp = await self._post(key, body)
            await self.cache.put(resp)  # stored before it is used
        self.usage.calls += 1
        self.usage.prompt_tokens += resp.prompt_tokens
        self.usage.completion_tokens += resp.completion_tokens
        return resp

    async def _post(self, key: str, body: dict[str, Any]) -> ChatResponse:
        """Send the call, retrying what can be retried; every failed try is kept (with its
        error) on the reply or on the `LLMError` that ends the call."""
        ep = self.endpoint
        tries: list[FailedTry] = []
        reached = False  # whether any try connected to the server
        for attempt in range(ep.max_retries + 1):
            if attempt:
                self._refuse_if_down(tries)  # it went down while this call was retrying
                self.usage.retries += 1
            started = time.monotonic()
            try:
                resp = await (self._stream(key, body) if ep.stream else self._once(key, body))
            except _TryFailed as exc:
                tries.append(exc.failed(time.monotonic() - started))
                reached = reached or exc.reached
                if exc.kind in ("connect", "timeout"):
                    self.usage.timeouts += 1
                if exc.kind == "refused":
                    self.unreachable_calls = 0  # the server answered
                    self.usage.failures += 1
                    raise LLMError(
                        f"{ep.base_url} refused the call to {self.model}: {exc}",
                        status=exc.status,
                        tries=tries,
                    ) from None
                if attempt == ep.max_retries:
                    break
                backoff = min(ep.backoff_max_s, ep.backoff_s * 2**attempt)
                wait = exc.delay if exc.delay is not None else backoff * (0.5 + random.random() / 2)
                log.info("retrying %s in %.2fs (%s)", self.model, wait, exc)
                await asyncio.sleep(wait)
                continue
            if resp.finish_reason == TIMEOUT:
                self.usage.timeouts += 1
            self.unreachable_calls = 0
            return resp.model_copy(update={"failed_tries": tries})
        if tries and not reached:
            self._unreachable(tries)
            self._refuse_if_down(tries)
        else:
            self.unreachable_calls = 0  # some try reached the server
        self.usage.failures += 1
        raise LLMError(
            f"call to {self.model} at {ep.base_url} failed after {ep.max_retries + 1} tries: "
            f"{tries[-1].error if tries else 'no attempt made'}",
            retryable=True,
            tries=tries,
        )

    def _deadline(self, body: dict[str, Any]) -> float:
        return self.speed.deadline(body.get("max_tokens"))

    async def _once(self, key: str, body: dict[str, Any]) -> ChatResponse:
        """One non-streamed try, bounded by the first-token cap plus the derived deadline."""
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.endpoint.timeout_s + self._deadline(body)):
                r = await self._http.post("chat/completions", json=body)
        except httpx.ConnectTimeout as exc:
            raise _TryFailed("connect", f"{type(exc).__name__}: {exc}", reached=False) from None
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise _TryFailed("timeout", f"no reply: {type(exc).__name__} {exc}") from None
        except httpx.TransportError as exc:
            raise _TryFailed(
                "connect", f"{type(exc).__name__}: {exc}", reached=_reached(exc)
            ) from None
        _check_status(r, self.endpoint.base_url)
        return self._parsed(key, body, r, time.monotonic() - started)

    def _parsed(
        self, key: str, body: dict[str, Any], r: httpx.Response, latency: float
    ) -> ChatResponse:
        try:
            return _parse(key, self.model, body, r.json(), latency)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _TryFailed(
                "malformed", f"malformed reply from {self.endpoint.base_url}: {exc}"
            ) from None

    async def _stream(self, key: str, body: dict[str, Any]) -> ChatResponse:
        """One streamed try. The first token may take up to the cap (`timeout_s`); after it
        the reply has the budget-derived deadline, and a reply cut there is kept with
        `finish_reason = "timeout"` (never sent again)."""
        ep = self.endpoint
        send = {**body, "stream": True, "stream_options": {"include_usage": True}}
        st = StreamState()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(ep.timeout_s) as deadline:
                request = self._http.build_request("POST", "chat/completions", json=send)
                r = await self._http.send(request, stream=True)
                try:
                    if r.status_code != 200:
                        await r.aread()
                        _check_status(r, ep.base_url)
                    if "text/event-stream" not in r.headers.get("content-type", ""):
                        await r.aread()  # a server that does not stream answers whole
                        return self._parsed(key, body, r, time.monotonic() - st.started)
                    async for line in sse_lines(r.aiter_text()):
                        if st.feed(line):
                            deadline.reschedule(loop.time() + self._deadline(body))
                        if st.done:
                            break
                finally:
                    await r.aclose()
        except httpx.ConnectTimeout as exc:
            raise _TryFailed("connect", f"{type(exc).__name__}: {exc}", reached=False) from None
        except (TimeoutError, httpx.TimeoutException) as exc:
            if st.first_at is None:
                raise _TryFailed(
                    "timeout", f"no token within {ep.timeout_s:g}s: {type(exc).__name__}"
                ) from None
            st.finish_reason = TIMEOUT  # keep what was generated
        except httpx.TransportError as exc:
            got = f" after {st.chunks} tokens" if st.chunks else ""
            raise _TryFailed(
                "connect", f"{type(exc).__name__}{got}: {exc}", reached=_reached(exc)
            ) from None
        except ValueError as exc:
            raise _TryFailed("malformed", f"malformed stream from {ep.base_url}: {exc}") from None
        if st.finish_reason is None:
            raise _TryFailed("malformed", f"the stream from {ep.base_url} ended without a reply")
        if st.finish_reason != TIMEOUT:
            self.speed.observe(*st.decoding())
        return self._parsed_stream(key, body, st)

    def _parsed_stream(self, key: str, body: dict[str, Any], st: StreamState) -> ChatResponse:
        try:
            return _parse(key, self.model, body, st.message(), time.monotonic() - st.started)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _TryFailed("malformed", f"malformed stream: {exc}") from None


class _TryFailed(Exception):
    """One try brought no reply; `kind` says why, `delay` is the server's Retry-After."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        delay: float | None = None,
        reached: bool = True,
    ):
        super().__init__(message)
        self.kind, self.status, self.delay = kind, status, delay
        self.reached = reached  # False: no connection to the server was made at all

    def failed(self, duration_s: float) -> FailedTry:
        return FailedTry(kind=self.kind, error=str(self), duration_s=duration_s, status=self.status)


def _reached(exc: httpx.TransportError) -> bool:
    """Whether a connection was made before the error (a refused or unroutable connection makes
    none; a connection dropped mid-reply did reach the server)."""
    return not isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))


def _check_status(r: httpx.Response, base_url: str) -> None:
    if r.status_code == 200:
        return
    if r.status_code == 429 or r.status_code >= 500:
        raise _TryFailed(
            "http", f"HTTP {r.status_code}: {r.text[:200]}", status=r.status_code,
            delay=_retry_after(r),
        )  # fmt: skip
    raise _TryFailed("refused", f"HTTP {r.status_code}: {r.text[:300]}", status=r.status_code)


def _retry_after(r: httpx.Response) -> float | None:
    value = r.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), 120.0))
    except ValueError:
        return None


def _parse(
    key: str, model: str, body: dict[str, Any], data: dict[str, Any], latency: float
) -> ChatResponse:
    choice = data["choices"][0]
    msg = choice["message"]
    content = msg.get("content") or ""
    if not isinstance(content, str):
        raise TypeError(f"content is {type(content).__name__}, not text")
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    if reasoning is None and (m := _THINK.match(content)):
        reasoning, content = m.group(1).strip(), content[m.end() :]
    usage = data.get("usage") or {}
    return ChatResponse(
        key=key,
        model=model,
        content=content,
        reasoning=reasoning,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        latency_s=latency,
        request=body,
    )
