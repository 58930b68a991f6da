"""The fake OpenAI-compatible server, over real HTTP, driven by math2's own client."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from pydantic import BaseModel

from math2.llm import Endpoint, LLMClient, LLMError, MemoryCache, structured
from math2.llm.testing import FakeServer, Rule, Script, load_script, spawn_fake_server

MSG = [
    {"role": "system", "content": "You are a careful formalizer."},
    {"role": "user", "content": "Formalize: ALPHA one plus one is two."},
]


class Verdict(BaseModel):
    consistent: bool
    defects: list[str] = []


def client(srv, *, cache=True, **ep) -> LLMClient:
    endpoint = Endpoint(
        base_url=srv.base_url, model=ep.pop("model", "gen"), backoff_s=0.001, max_retries=2, **ep
    )
    return LLMClient(endpoint, MemoryCache() if cache else None)


async def test_scripted_reply_reasoning_usage_and_models():
    script = Script(
        models=["gen", "judge"],
        rules=[
            Rule(model="^judge$", reply="judge says no"),
            Rule(model="gen", user="ALPHA", reply="theorem a : 1 + 1 = 2 := sorry", reasoning="hm"),
        ],
    )
    with FakeServer(script) as srv:
        r = await client(srv).chat(MSG)
        assert r.content == "theorem a : 1 + 1 = 2 := sorry"
        assert r.reasoning == "hm"
        assert (
            r.completion_tokens == -(-len(r.content) // 4) and r.prompt_tokens > 0
        )  # 4 chars a token
        j = await client(srv, model="judge").chat(MSG)
        assert j.content == "judge says no"
        other = await client(srv).chat([{"role": "user", "content": "BETA"}])
        assert other.content == script.default  # no rule matched
        models = httpx.get(srv.base_url + "/models").json()
        assert [m["id"] for m in models["data"]] == ["gen", "judge"]
        raw = httpx.post(srv.base_url + "/chat/completions", json={"model": "gen", "messages": MSG})
        usage = raw.json()["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


async def test_replies_cycle_by_call_count():
    script = Script(rules=[Rule(replies=["one", "two"])])
    with FakeServer(script) as srv:
        c = client(srv, cache=False)
        got = [(await c.chat(MSG, sample=i)).content for i in range(3)]
    assert got == ["one", "two", "one"]


async def test_429_with_retry_after_then_success():
    script = Script(rules=[Rule(status=429, fail_times=2, retry_after=0.3, reply="finally")])
    with FakeServer(script) as srv:
        first = httpx.post(srv.base_url + "/chat/completions", json={"model": "x", "messages": MSG})
        assert first.status_code == 429 and first.headers["retry-after"] == "0.3"
        started = time.monotonic()
        r = await client(srv).chat(MSG)
        elapsed = time.monotonic() - started
        assert r.content == "finally"
        assert elapsed >= 0.3  # the client waited as told
        assert [e["status"] for e in srv.requests] == [429, 429, 200]


async def test_500_until_retries_run_out():
    script = Script(rules=[Rule(status=500, reply="never")])
    with FakeServer(script) as srv:
        c = client(srv)
        with pytest.raises(LLMError, match="HTTP 500"):
            await c.chat(MSG)
        assert len(srv.requests) == 3  # one try and two retries
        assert c.usage.failures == 1


async def test_malformed_body_and_dropped_connection():
    script = Script(rules=[Rule(user="MALFORMED", malformed=True), Rule(user="DROP", drop=True)])
    with FakeServer(script) as srv:
        body = {"model": "x", "messages": [{"role": "user", "content": "MALFORMED"}]}
        raw = httpx.post(srv.base_url + "/chat/completions", json=body)
        with pytest.raises(ValueError):
            json.loads(raw.content)
        with pytest.raises(LLMError, match="malformed reply"):
            await client(srv).chat(body["messages"])
        with pytest.raises(httpx.TransportError):
            httpx.post(
                srv.base_url + "/chat/completions",
                json={"model": "x", "messages": [{"role": "user", "content": "DROP"}]},
            )
        with pytest.raises(LLMError, match="failed after 3 tries"):
            await client(srv).chat([{"role": "user", "content": "DROP"}])


async def test_body_that_is_not_json_is_a_400():
    with FakeServer(Script()) as srv:
        r = httpx.post(srv.base_url + "/chat/completions", content=b"{not json")
        assert r.status_code == 400
        assert srv.requests == []


@pytest.mark.parametrize("mode", ["honour", "ignore"])
async def test_json_schema_honoured_or_ignored(mode):
    script = Script(json_schema=mode, rules=[Rule(json={"consistent": True, "defects": []})])
    with FakeServer(script) as srv:
        c = client(srv)
        out = await structured(c, MSG, Verdict)
        assert out.value == Verdict(consistent=True)
        sent = srv.requests[0]["body"]
        assert sent["response_format"]["type"] == "json_schema"
        content = out.responses[0].content
        assert content.startswith("{") == (mode == "honour")


async def test_json_schema_rejected_is_a_clear_refusal_and_tags_work():
    script = Script(json_schema="reject", rules=[Rule(json={"consistent": False})])
    with FakeServer(script) as srv:
        with pytest.raises(LLMError, match=r"HTTP 400.*not supported"):
            await structured(client(srv), MSG, Verdict)
        # configured as not honouring schemas, the client asks for tagged JSON instead
        out = await structured(client(srv, json_schema=False), MSG, Verdict)
        assert out.value == Verdict(consistent=False)
        assert "response_format" not in srv.requests[-1]["body"]


async def test_judge_answering_garbage_is_a_failure_never_a_value():
    script = Script(rules=[Rule(reply="I think it is fine, mostly.")])
    with FakeServer(script) as srv:
        out = await structured(client(srv), MSG, Verdict, retries=1)
        assert out.value is None and "no valid Verdict after 2 replies" in out.error
        assert len(srv.requests) == 2  # the retry carried the parse error
        assert "could not be read" in srv.requests[1]["body"]["messages"][-1]["content"]


async def test_latency_model_and_concurrency():
    script = Script(latency_s=0.2, per_token_s=0.01, rules=[Rule(reply="x" * 40)])  # 10 tokens
    with FakeServer(script) as srv:
        c = client(srv, cache=False, concurrency=3)
        started = time.monotonic()
        replies = await asyncio.gather(*(c.chat(MSG, sample=i) for i in range(6)))
        elapsed = time.monotonic() - started
        assert srv.max_active == 3  # the client's limit, seen from the server
        assert all(r.latency_s >= 0.3 for r in replies)  # 0.2 s + 10 tokens × 0.01 s
        assert elapsed >= 2 * 0.3  # two waves of three


async def test_counts_per_request_hash():
    with FakeServer(Script(rules=[Rule(reply="ok")])) as srv:
        cached = client(srv)
        await cached.chat(MSG)
        await cached.chat(MSG)  # from the cache: not sent again
        assert srv.repeats() == {}
        uncached = client(srv, cache=False)
        await uncached.chat(MSG)
        counts = srv.counts()
        assert list(counts.values()) == [2]
        assert srv.repeats() == counts
        served = httpx.get(f"http://127.0.0.1:{srv.port}/_counts").json()
        assert served == counts


async def test_child_process_keeps_counting_across_clients(tmp_path):
    script = Script(rules=[Rule(user="ALPHA", reply="alpha"), Rule(reply="other")])
    with spawn_fake_server(script, tmp_path) as proc:
        first = client(proc)
        assert (await first.chat(MSG)).content == "alpha"
        second = client(proc)  # a "restarted" client with its own (empty) cache
        assert (await second.chat([{"role": "user", "content": "BETA"}])).content == "other"
        assert len(proc.requests()) == 2 and proc.repeats() == {}
        await second.chat(MSG)
        assert list(proc.repeats().values()) == [2]
    assert proc.proc.poll() is not None  # stopped on exit


def test_script_file_round_trip(tmp_path):
    script = Script(
        json_schema="ignore",
        latency_s=0.01,
        rules=[Rule(system="judge", json={"consistent": True}, status=429, fail_times=1)],
    )
    path = tmp_path / "s.json"
    path.write_text(script.model_dump_json(by_alias=True))
    again = load_script(path)
    assert again == script and again.rules[0].json_value == {"consistent": True}


async def test_reply_expanded_from_the_user_match():
    script = Script(
        rules=[Rule(user=r"item (?P<id>\w+)", reply=r"theorem t_\g<id> : True", expand=True)]
    )
    with FakeServer(script) as srv:
        r = await client(srv).chat([{"role": "user", "content": "Formalize item x42, please."}])
    assert r.content == "theorem t_x42 : True"
