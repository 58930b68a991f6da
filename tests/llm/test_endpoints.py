"""One model on several OpenAI-compatible servers: calls balanced, a dead server taken out and
tried again later, no call made twice."""

from __future__ import annotations

import asyncio
import time

from math2.config import Settings
from math2.llm import Endpoint, make_client
from math2.llm.endpoints import BalancingTransport, balanced_client
from math2.llm.testing import FakeServer, Rule, Script
from math2.llm.testing.fake_server import read_log, repeats

DEAD = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


def _script() -> Script:
    return Script(rules=[Rule(user=r"call (\d+)", reply=r"answer \1", expand=True)], latency_s=0.02)


async def test_calls_balanced_and_a_dead_server_taken_out(tmp_path):
    with (
        FakeServer(_script(), log_path=tmp_path / "a.jsonl") as a,
        FakeServer(_script(), log_path=tmp_path / "b.jsonl") as b,
    ):
        ep = Endpoint(base_url=a.base_url, model="fake-model", concurrency=2)
        client = balanced_client(ep, [DEAD, a.base_url, b.base_url])
        transport = client._http._transport
        assert isinstance(transport, BalancingTransport)
        assert client.limiter.capacity == 6
        replies = await asyncio.gather(
            *(client.chat([{"role": "user", "content": f"call {k}"}]) for k in range(12))
        )
        await client.aclose()
    assert [r.content for r in replies] == [f"answer {k}" for k in range(12)]
    la, lb = read_log(tmp_path / "a.jsonl"), read_log(tmp_path / "b.jsonl")
    assert la and lb and len(la) + len(lb) == 12  # both used, each call made once
    assert repeats(la + lb) == {}
    dead, *_ = transport.members
    assert dead.failures >= 1 and dead.down_until > time.monotonic()


async def test_an_endpoint_out_is_tried_again_after_its_cooldown(tmp_path):
    with FakeServer(_script()) as a:
        t = BalancingTransport([DEAD, a.base_url], 2, cooldown_s=1.0)
        client = balanced_client(Endpoint(base_url=a.base_url, model="fake-model"), [a.base_url])
        client._http._transport = t
        await client.chat([{"role": "user", "content": "call 1"}])
        assert t.members[0].failures == 1
        await client.chat([{"role": "user", "content": "call 2"}])
        assert t.members[0].failures == 1  # still out: not tried
        await asyncio.sleep(1.1)
        await client.chat([{"role": "user", "content": "call 3"}])
        assert t.members[0].failures == 2  # back in, tried, out again (for twice as long)
        await client.aclose()


def test_configured_base_urls_make_a_balanced_client():
    settings = Settings.model_validate(
        {
            "llm": {
                "endpoints": {
                    "m": {"base_urls": ["http://h1/v1", "http://h2/v1"], "concurrency": 3}
                }
            }
        }
    )
    client = make_client(settings, "m")
    assert isinstance(client._http._transport, BalancingTransport)
    assert [m.base_url for m in client._http._transport.members] == [
        "http://h1/v1/",
        "http://h2/v1/",
    ]
    assert client.limiter.capacity == 6
