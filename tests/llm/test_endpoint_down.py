"""An endpoint that cannot be reached on `down_after` calls in a row is down for the client:
that call and every later one raise `EndpointDown` at once, naming the endpoint; a reply resets
the count (issue 34 §5). A dead endpoint is a closed port; a live one is the fake server."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from math2.config import Settings
from math2.llm import Endpoint, EndpointDown, LLMClient, LLMError, MemoryCache, endpoint_for
from math2.llm.testing import FakeServer, Rule, Script


def closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client(base_url: str, **ep) -> LLMClient:
    ep.setdefault("max_retries", 1)
    ep.setdefault("down_after", 3)
    endpoint = Endpoint(base_url=base_url, model="judge", backoff_s=0.001, **ep)
    return LLMClient(endpoint, MemoryCache())


def msg(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Judge pair {i}."}]


async def test_down_after_n_calls_that_could_not_connect_then_at_once():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    c = client(url)
    for i in range(2):  # two calls that could not connect: still ordinary failures
        with pytest.raises(LLMError) as info:
            await c.chat(msg(i))
        assert not isinstance(info.value, EndpointDown)
        assert [t.kind for t in info.value.tries] == ["connect", "connect"]
    assert not c.down and c.unreachable_calls == 2
    with pytest.raises(EndpointDown) as info:  # the third: the endpoint is down
        await c.chat(msg(2))
    down = info.value
    assert c.down and down.base_url == url and down.consecutive == 3
    assert url in str(down) and "3 calls in a row could not connect" in str(down)
    assert [t.kind for t in down.tries] == ["connect", "connect"]  # that call's own tries
    assert isinstance(down, LLMError) and not down.retryable
    # every later call fails at once, sending nothing
    started = time.monotonic()
    for i in range(3, 50):
        with pytest.raises(EndpointDown) as info:
            await c.chat(msg(i))
        assert info.value.tries == [] and info.value.consecutive == 3
    assert time.monotonic() - started < 1.0
    assert c.usage.failures == 50 and c.usage.retries == 3  # one retry each for the first three
    await c.aclose()


async def test_a_reply_resets_the_count():
    port = closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    c = client(url, max_retries=0)
    for i in range(2):
        with pytest.raises(LLMError):
            await c.chat(msg(i))
    assert c.unreachable_calls == 2
    with FakeServer(Script(rules=[Rule(reply="fine")]), port=port):  # it comes back
        assert (await c.chat(msg(2))).content == "fine"
    assert c.unreachable_calls == 0 and not c.down
    for i in range(3, 5):  # gone again: two calls in a row are not yet three
        with pytest.raises(LLMError) as info:
            await c.chat(msg(i))
        assert not isinstance(info.value, EndpointDown)
    with pytest.raises(EndpointDown):
        await c.chat(msg(5))
    # a cached call needs no endpoint: it is still answered
    assert (await c.chat(msg(2))).cached
    await c.aclose()


async def test_an_answer_that_is_an_error_is_not_a_connection_failure():
    # 5xx after every retry, a connection dropped with no answer, then 4xx: the server was
    # reached each time, so it is not down
    script = Script(
        rules=[
            Rule(user="busy", reply="x", status=503),
            Rule(user="drop", reply="x", drop=True),
            Rule(reply="x", status=400),
        ]
    )
    with FakeServer(script) as srv:
        c = client(srv.base_url, max_retries=1, down_after=1)
        with pytest.raises(LLMError) as info:
            await c.chat([{"role": "user", "content": "drop"}])
        assert {t.kind for t in info.value.tries} == {"connect"}  # a lost connection…
        assert not isinstance(info.value, EndpointDown)  # …that had reached the server
        for text in ("busy", "bad", "busy", "drop"):
            with pytest.raises(LLMError) as info:
                await c.chat([{"role": "user", "content": text}])
            assert not isinstance(info.value, EndpointDown)
        assert not c.down and c.unreachable_calls == 0
        await c.aclose()


async def test_concurrent_calls_stop_once_it_is_down():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    c = client(url, max_retries=2, down_after=2, concurrency=4)
    results = await asyncio.gather(*(c.chat(msg(i)) for i in range(40)), return_exceptions=True)
    assert all(isinstance(r, LLMError) for r in results)
    down = [r for r in results if isinstance(r, EndpointDown)]
    # at most `concurrency` calls were in flight when it went down; the rest sent nothing
    assert len(down) >= 40 - 4 - 1
    assert sum(1 for r in down if not r.tries) >= 40 - 4 - 1
    assert all(url in str(r) for r in down)
    await c.aclose()


async def test_zero_never_stops_calling():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    c = client(url, max_retries=0, down_after=0)
    for i in range(6):
        with pytest.raises(LLMError) as info:
            await c.chat(msg(i))
        assert not isinstance(info.value, EndpointDown) and info.value.tries
    assert not c.down
    await c.aclose()


async def test_balanced_endpoint_is_down_only_when_every_server_is():
    from math2.llm.endpoints import balanced_client

    dead = [f"http://127.0.0.1:{closed_port()}/v1" for _ in range(2)]
    ep = Endpoint(base_url=dead[0], model="judge", backoff_s=0.001, max_retries=0, down_after=2)
    with FakeServer(Script(rules=[Rule(reply="fine")])) as live:
        c = balanced_client(ep, [dead[0], live.base_url])
        c.cache = MemoryCache()
        for i in range(5):  # one server up: every call is answered
            assert (await c.chat(msg(i))).content == "fine"
        await c.aclose()
    c = balanced_client(ep, dead)
    c.cache = MemoryCache()
    with pytest.raises(LLMError):
        await c.chat(msg(0))
    with pytest.raises(EndpointDown):
        await c.chat(msg(1))
    await c.aclose()


def test_the_setting_reaches_the_endpoint():
    s = Settings(llm={"base_url": "http://127.0.0.1:1/v1"})
    assert endpoint_for(s, "m").down_after == 3  # the default
    s = Settings(llm={"base_url": "http://127.0.0.1:1/v1", "down_after": 7})
    assert endpoint_for(s, "m").down_after == 7
    with pytest.raises(ValueError):
        Settings(llm={"base_url": "http://127.0.0.1:1/v1", "down_after": -1})
