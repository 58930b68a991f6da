"""Model calls as attempts: a call to an endpoint that does not answer is an attempt with every
try and its error (counted by `runs show`), replaced when a retry of the item gets a reply; the
wait for a model slot is kept apart from the model's time."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass

from pydantic import BaseModel
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm import Endpoint, LLMClient, MemoryCache, load_template
from math2.llm.testing import FakeServer, Rule, Script
from math2.runs import ItemContext, Job, RunServices, execute, run_detail, step
from math2.runs.context import CALL_FAILED
from math2.store import Attempt


@dataclass
class ClientServices(RunServices):
    client: LLMClient


class Rec(BaseModel):
    id: str
    text: str


@step("test.calls.ask")
def ask():
    async def run(rec: Rec, ctx: ItemContext) -> Rec:
        await ctx.chat(
            ctx.services.client,
            load_template("formalize/generate"),
            {"statement": rec.text, "hits": [], "previous": None, "feedback": "", "round": 1},
            stage="generate",
            round=1,
            max_tokens=32,
        )
        return rec

    return run


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _client(url: str, concurrency: int = 4) -> LLMClient:
    # every call meets the dead endpoint itself (down_after=0: the client's early stop is
    # tests/llm/test_endpoint_down.py's)
    ep = Endpoint(
        base_url=url,
        model="m",
        backoff_s=0.001,
        max_retries=2,
        concurrency=concurrency,
        down_after=0,
    )
    return LLMClient(ep, MemoryCache())


def _run(store, url: str, recs: list[Rec], concurrency: int = 4):
    client = _client(url, concurrency)
    job = Job("test-calls", "k", [ask()])
    return asyncio.run(
        execute(
            store,
            job,
            recs,
            services=ClientServices(client),
            resources={"model": client.limiter},
            max_in_flight=8,
        )
    )


def test_unanswered_calls_are_attempts_and_counted(sqlite_store):
    recs = [Rec(id=f"r{i}", text=f"statement {i}") for i in range(3)]
    summary = _run(sqlite_store, _closed_port(), recs)
    assert summary.failed == 3 and summary.timeouts == 9  # 3 tries a call, each refused
    with sqlite_store.session() as s:
        rows = list(s.scalars(select(Attempt).order_by(Attempt.item)))
        detail = run_detail(s, summary.run_id)
    assert [a.verdict for a in rows] == [CALL_FAILED] * 3
    for a in rows:
        assert len(a.response["failed_tries"]) == 3
        assert {t["kind"] for t in a.response["failed_tries"]} == {"connect"}
        assert "failed after 3 tries" in a.error and a.request["max_tokens"] == 32
    assert detail.calls_failed == 3 and detail.failed_tries == {"connect": 9}
    out = CliRunner().invoke(
        app, ["--db", str(sqlite_store.engine.url), "runs", "show", str(summary.run_id)]
    )
    assert out.exit_code == 0, out.output
    assert "model calls with no reply: 3; failed tries: connect 9" in out.output

    # The endpoint comes up: the failed items are tried again and their attempts replaced,
    # the earlier tries kept beside the reply.
    with FakeServer(Script(rules=[Rule(reply="```lean\ntheorem t : True := trivial\n```")])) as srv:
        again = _run(sqlite_store, srv.base_url, recs)
    assert again.run_id == summary.run_id and again.done == 3 and again.failed == 0
    with sqlite_store.session() as s:
        rows = list(s.scalars(select(Attempt).order_by(Attempt.item)))
        detail = run_detail(s, summary.run_id)
    assert len(rows) == 3 and all(a.verdict is None and a.error is None for a in rows)
    assert all(a.response["content"].startswith("```lean") for a in rows)
    assert all(len(a.response["failed_tries"]) == 3 for a in rows)
    assert detail.calls_failed == 0 and detail.finish_reasons == {"stop": 3}


def test_queue_time_apart_from_model_time(sqlite_store):
    recs = [Rec(id=f"r{i}", text=f"statement {i}") for i in range(4)]
    with FakeServer(Script(latency_s=0.3, rules=[Rule(reply="ok")])) as srv:
        summary = _run(sqlite_store, srv.base_url, recs, concurrency=1)
    assert summary.done == 4
    with sqlite_store.session() as s:
        rows = list(s.scalars(select(Attempt)))
        detail = run_detail(s, summary.run_id)
    # one slot: the four calls ran one after another, so three of them queued
    assert all(0.25 <= a.duration_s < 1.5 for a in rows)
    queued = sorted(a.response["queue_s"] for a in rows)
    assert queued[0] < 0.2 and queued[-1] >= 0.8
    assert abs(detail.queue_s - sum(queued)) < 1e-6
    assert 1.0 <= detail.model_s < 5.0
