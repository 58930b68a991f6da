"""Streamed replies: the fake server's server-sent events, deadlines derived from the endpoint's
measured speed, a cut reply kept (finish_reason "timeout") and cached, never sent again, and
every failed try of a call kept with its error."""

from __future__ import annotations

import json
import socket

import httpx

from math2.llm import Endpoint, LLMClient, LLMError, MemoryCache
from math2.llm.stream import TIMEOUT, SpeedModel
from math2.llm.testing import FakeServer, Rule, Script

MSG = [{"role": "user", "content": "Formalize: SLOW one plus one is two."}]
WARM = [{"role": "user", "content": "Formalize: WARM zero is zero."}]
LONG = "theorem t : 1 + 1 = 2 := by norm_num -- " + "x" * 400  # about 110 tokens


def client(srv_url: str, **ep) -> LLMClient:
    ep.setdefault("max_retries", 2)
    endpoint = Endpoint(base_url=srv_url, model="gen", backoff_s=0.001, **ep)
    return LLMClient(endpoint, MemoryCache())


def test_fake_server_speaks_sse_as_openai_does():
    script = Script(rules=[Rule(user="SLOW", reply="abcdefghij", reasoning="hm")])
    with FakeServer(script) as srv:
        body = {
            "model": "gen",
            "messages": MSG,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with httpx.stream("POST", srv.base_url + "/chat/completions", json=body) as r:
            assert r.headers["content-type"] == "text/event-stream"
            lines = [ln for ln in r.iter_lines() if ln]
    assert all(ln.startswith("data: ") for ln in lines)
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(ln[6:]) for ln in lines[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "abcdefghij"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3
    assert any(c["choices"] and c["choices"][0]["delta"].get("reasoning_content") for c in chunks)


def test_fake_server_honours_max_tokens():
    with FakeServer(Script(rules=[Rule(reply=LONG)])) as srv:
        body = {"model": "gen", "messages": MSG, "max_tokens": 5}
        data = httpx.post(srv.base_url + "/chat/completions", json=body).json()
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["choices"][0]["message"]["content"] == LONG[:20]


def test_speed_model_deadline_has_floor_and_cap():
    sm = SpeedModel(floor_s=10, cap_s=100, margin=2.0)
    assert sm.deadline(500) == 100  # nothing measured yet: the cap
    sm.observe(100, 2.0)  # 50 tokens/s
    assert sm.deadline(500) == 20  # 2 × 500 / 50
    assert sm.deadline(50) == 10  # the floor
    assert sm.deadline(100_000) == 100  # the cap
    assert sm.deadline(None) == 100  # no budget: the cap
    sm.observe(2, 10.0)  # too short to count
    assert sm.observe and sm.observed == 1


async def test_deadline_keeps_what_was_generated_and_is_not_resent():
    script = Script(
        per_token_s=0.002,
        rules=[Rule(user="SLOW", reply=LONG, stall_after=12), Rule(user="WARM", reply=LONG)],
    )
    with FakeServer(script) as srv:
        c = client(srv.base_url, timeout_s=10, timeout_floor_s=0.3)
        warm = await c.chat(WARM, max_tokens=200)
        assert warm.finish_reason == "stop" and c.speed.tokens_per_s
        # the budget and the measured speed (hundreds of tokens/s) give a deadline of 2 × 40 /
        # speed, at least the 0.3 s floor, far below the 10 s cap: the stalled reply is cut
        # there and kept
        deadline = c.speed.deadline(40)
        assert deadline == max(0.3, 2 * 40 / c.speed.tokens_per_s) and deadline < 5
        r = await c.chat(MSG, max_tokens=40)
        assert r.finish_reason == TIMEOUT
        assert r.content == LONG[:48]  # the 12 tokens that arrived
        assert r.completion_tokens == 12 and deadline <= r.latency_s < 9
        assert c.usage.timeouts == 1 and c.usage.retries == 0
        again = await c.chat(MSG, max_tokens=40)  # the same request: the stored cut reply
        assert again.cached and again.finish_reason == TIMEOUT
        assert len([h for h in srv.requests if "SLOW" in json.dumps(h["body"])]) == 1
        await c.aclose()


async def test_no_first_token_is_a_failed_try_then_retried():
    script = Script(rules=[Rule(user="SLOW", reply="ok", stall_after=0)])
    with FakeServer(script) as srv:
        c = client(srv.base_url, timeout_s=0.3, max_retries=1)
        try:
            await c.chat(MSG, max_tokens=10)
        except LLMError as exc:
            tries = exc.tries
        else:
            raise AssertionError("a call that never produced a token returned")
        assert [t.kind for t in tries] == ["timeout", "timeout"]
        assert all("no token within" in t.error for t in tries)
        assert len(srv.requests) == 2 and c.usage.timeouts == 2
        await c.aclose()


async def test_endpoint_that_does_not_answer_records_every_try():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}/v1", max_retries=2)
    try:
        await c.chat(MSG)
    except LLMError as exc:
        assert exc.retryable and len(exc.tries) == 3
        assert {t.kind for t in exc.tries} == {"connect"}
        assert all("ConnectError" in t.error for t in exc.tries)
    else:
        raise AssertionError("a call to a closed port returned")
    await c.aclose()


async def test_failed_tries_before_a_reply_travel_with_it():
    script = Script(rules=[Rule(user="SLOW", reply="fine", status=503, fail_times=2)])
    with FakeServer(script) as srv:
        c = client(srv.base_url)
        r = await c.chat(MSG)
        assert r.content == "fine"
        assert [(t.kind, t.status) for t in r.failed_tries] == [("http", 503), ("http", 503)]
        await c.aclose()


async def test_non_streaming_endpoint_still_works():
    with FakeServer(Script(rules=[Rule(reply="plain")])) as srv:
        c = client(srv.base_url, stream=False)
        r = await c.chat(MSG, max_tokens=10)
        assert r.content == "plain" and r.finish_reason == "stop"
        assert "stream" not in srv.requests[0]["body"]
        await c.aclose()


async def test_balanced_endpoints_pass_the_stream_through():
    from math2.llm.endpoints import balanced_client

    script = Script(
        per_token_s=0.002,
        rules=[Rule(user="SLOW", reply=LONG, stall_after=12), Rule(user="WARM", reply=LONG)],
    )
    with FakeServer(script) as a, FakeServer(script) as b:
        ep = Endpoint(
            base_url=a.base_url, model="gen", timeout_s=10, timeout_floor_s=0.3, max_retries=0
        )
        c = balanced_client(ep, [a.base_url, b.base_url])
        c.cache = MemoryCache()
        await c.chat(WARM, max_tokens=200)
        r = await c.chat(MSG, max_tokens=40)
        # the cut reply came through the balancer token by token: what arrived is kept
        assert r.finish_reason == TIMEOUT and r.content == LONG[:48]
        members = c._http._transport.members
        assert sum(m.calls for m in members) == 2 and all(m.in_flight == 0 for m in members)
        await c.aclose()


async def test_a_reply_holding_unicode_line_breaks_is_read_whole():
    # A server writes U+2028 (and the other characters Python's splitlines breaks at) raw
    # inside a chunk's JSON; only the event stream's own line ends cut it (issue 34).
    odd = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei"
    reply = f"theorem t : 1 = 1 := rfl -- {odd} {odd}"
    with FakeServer(Script(rules=[Rule(user="SLOW", reply=reply)])) as srv:
        c = client(srv.base_url, max_retries=0)
        r = await c.chat(MSG, max_tokens=200)
        assert r.content == reply and r.finish_reason == "stop" and not r.failed_tries
        assert len(srv.requests) == 1
        await c.aclose()


async def test_sse_lines_split_at_event_stream_line_ends_only():
    from math2.llm.stream import sse_lines

    async def pieces(*texts: str):
        for t in texts:
            yield t

    got = [
        ln
        async for ln in sse_lines(
            pieces("data: a\u2028b\r", "\ndata: c\n\n", "data: d\re", "f\u2029\r\n", "data: g\r")
        )
    ]
    assert got == ["data: a\u2028b", "data: c", "", "data: d", "ef\u2029", "data: g"]
