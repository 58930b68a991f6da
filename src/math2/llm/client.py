"""One async client for OpenAI-compatible chat endpoints.

Concurrency is bounded by a `Resource` (the endpoint's slots); 429, 5xx, malformed bodies and
connection errors are retried with exponential backoff (honouring `Retry-After`); every reply is
put in the response cache before it is returned, keyed by model + parameters + messages + sample
index, so pass@k samples differ and a rerun repeats no finished call.
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
from math2.llm.types import ChatResponse, Endpoint, LLMError, Usage, cache_key
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
        async with self.limiter.slot():  # a call holds its slot until its reply is stored
            resp = await self._post(key, body)
            await self.cache.put(resp)  # stored before it is used
        self.usage.calls += 1
        self.usage.prompt_tokens += resp.prompt_tokens
        self.usage.completion_tokens += resp.completion_tokens
        return resp

    async def _post(self, key: str, body: dict[str, Any]) -> ChatResponse:
        ep = self.endpoint
        last = "no attempt made"
        for attempt in range(ep.max_retries + 1):
            if attempt:
                self.usage.retries += 1
            started = time.monotonic()
            delay: float | None = None
            try:
                r = await self._http.post("chat/completions", json=body)
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                self.usage.timeouts += 1
                last = f"{type(exc).__name__}: {exc}"
            else:
                if r.status_code == 200:
                    try:
                        return _parse(key, self.model, body, r.json(), time.monotonic() - started)
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        last = f"malformed reply from {ep.base_url}: {exc}"
                elif r.status_code == 429 or r.status_code >= 500:
                    last = f"HTTP {r.status_code}: {r.text[:200]}"
                    delay = _retry_after(r)
                else:
                    self.usage.failures += 1
                    raise LLMError(
                        f"{ep.base_url} refused the call to {self.model}: HTTP {r.status_code}: "
                        f"{r.text[:300]}",
                        status=r.status_code,
                    )
            if attempt == ep.max_retries:
                break
            backoff = min(ep.backoff_max_s, ep.backoff_s * 2**attempt)
            wait = delay if delay is not None else backoff * (0.5 + random.random() / 2)
            log.info("retrying %s in %.2fs (%s)", self.model, wait, last)
            await asyncio.sleep(wait)
        self.usage.failures += 1
        raise LLMError(
            f"call to {self.model} at {ep.base_url} failed after {ep.max_retries + 1} tries: "
            f"{last}",
            retryable=True,
        )


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
