"""The LLM client: cache, retries, backoff, errors, reasoning, tokens, concurrency."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from math2.llm import Endpoint, LLMClient, LLMError, MemoryCache
from tests.llm.mock import Scripted, completion

MSG = [{"role": "user", "content": "Formalize: 1 + 1 = 2"}]


def client(script: Scripted, **ep) -> LLMClient:
    endpoint = Endpoint(
        base_url="http://model.test/v1", model="m", backoff_s=0.001, max_retries=3, **ep
    )
    return LLMClient(endpoint, MemoryCache(), transport=script.transport())


async def test_reply_reasoning_and_tokens():
    s = Scripted([completion("theorem x : 1 + 1 = 2 := sorry", reasoning="think", tokens=(7, 3))])
    c = client(s)
    r = await c.chat(MSG, temperature=0.0)
    assert r.content.startswith("theorem x")
    assert r.reasoning == "think"
    assert (r.prompt_tokens, r.completion_tokens) == (7, 3)
    assert c.usage.prompt_tokens == 7 and c.usage.completion_tokens == 3
    assert s.requests[0]["model"] == "m" and s.requests[0]["temperature"] == 0.0


async def test_think_tags_split_out():
    s = Scripted(["<think>plan it</think>\nthe answer"])
    r = await client(s).chat(MSG)
    assert r.reasoning == "plan it" and r.content == "the answer"


async def test_cache_by_sample_index():
    s = Scripted(lambda body: f"reply {len(s.requests)}")
    c = client(s)
    a = await c.chat(MSG, sample=0, temperature=0.8)
    b = await c.chat(MSG, sample=0, temperature=0.8)
    d = await c.chat(MSG, sample=1, temperature=0.8)
    e = await c.chat(MSG, sample=0, temperature=0.2)
    assert len(s.requests) == 3  # the repeat came from the cache
    assert b.cached and b.content == a.content
    assert d.content != a.content and e.content != a.content
    assert c.usage.cached_calls == 1


async def test_seed_offset_by_sample():
    s = Scripted(lambda body: "ok")
    c = client(s)
    await c.chat(MSG, sample=3, seed=100)
    assert s.requests[0]["seed"] == 103


async def test_retries_429_5xx_connection_and_malformed():
    s = Scripted(
        [
            httpx.Response(429, headers={"Retry-After": "0"}, text="slow down"),
            httpx.Response(503, text="busy"),
            httpx.ConnectError("refused"),
            httpx.Response(200, text="{not json"),
            "finally",
        ]
    )
    c = LLMClient(
        Endpoint(base_url="http://m.test/v1", model="m", backoff_s=0.001, max_retries=5),
        MemoryCache(),
        transport=s.transport(),
    )
    r = await c.chat(MSG)
    assert r.content == "finally"
    assert c.usage.retries == 4 and len(s.requests) == 5


async def test_gives_up_after_retries():
    s = Scripted(lambda body: httpx.Response(500, text="boom"))
    c = client(s)
    with pytest.raises(LLMError, match="failed after 4 tries"):
        await c.chat(MSG)
    assert len(s.requests) == 4
    # nothing was cached: a later call tries again
    with pytest.raises(LLMError):
        await c.chat(MSG)
    assert len(s.requests) == 8


async def test_client_error_is_not_retried():
    s = Scripted([httpx.Response(400, text="bad request: unknown model")])
    c = client(s)
    with pytest.raises(LLMError, match="HTTP 400") as exc:
        await c.chat(MSG)
    assert exc.value.status == 400 and len(s.requests) == 1


async def test_unknown_parameter_refused():
    c = client(Scripted([]))
    with pytest.raises(ValueError, match="unknown sampling parameters"):
        await c.chat(MSG, temprature=0.1)


async def test_concurrency_limit():
    s = Scripted(lambda body: "ok", delay_s=0.02)
    c = client(s, concurrency=3)
    await asyncio.gather(*(c.chat(MSG, sample=i) for i in range(12)))
    assert s.max_active == 3
    assert 0 < c.limiter.utilisation() <= 1


async def test_store_cache_persists(sqlite_store):
    from math2.llm import StoreCache
    from math2.store.aio import AsyncStore

    s = Scripted(lambda body: "stored reply")
    ep = Endpoint(base_url="http://m.test/v1", model="m")
    astore = AsyncStore(sqlite_store)
    try:
        c1 = LLMClient(ep, StoreCache(astore), transport=s.transport())
        await c1.chat(MSG, sample=2)
        c2 = LLMClient(ep, StoreCache(astore), transport=s.transport())
        r = await c2.chat(MSG, sample=2)
    finally:
        await astore.aclose()
    assert r.cached and r.content == "stored reply" and len(s.requests) == 1
