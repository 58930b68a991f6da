"""The run engine: identity by spec, streaming with back-pressure, attempts, failure, resume."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel
from sqlalchemy import func, select

from math2.llm import Endpoint, LLMClient, StoreCache, load_template_file
from math2.runs import ItemContext, Job, Resource, execute, item_attempts, list_runs, step
from math2.store import Attempt, RunItem
from math2.store.aio import AsyncStore
from tests.llm.mock import Scripted


class Item(BaseModel):
    id: str
    text: str
    answer: str | None = None


@step("test.ask")
def ask(model: str, fail_on: str = "", template_path: str = ""):
    def run_factory(client_box: dict):
        async def run(rec: Item, ctx: ItemContext) -> Item:
            if fail_on and fail_on in rec.text:
                raise ValueError(f"cannot handle {rec.text!r}")
            t = load_template_file(__import__("pathlib").Path(template_path))
            async with ctx.slot("model"):
                resp, _ = await ctx.chat(
                    client_box["client"], t, {"statement": rec.text}, stage="generate"
                )
            return rec.model_copy(update={"answer": resp.content})

        return run

    return run_factory(_CLIENT)


_CLIENT: dict = {}


@pytest.fixture
def template(tmp_path):
    p = tmp_path / "ask.toml"
    p.write_text('id = "test/ask"\nversion = 1\nuser = "Formalize {{ statement }}"\n')
    return str(p)


def items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", text=f"statement {k}") for k in range(n)]


async def test_run_records_items_and_attempts(store, template):
    s = Scripted(lambda body: "answer to " + body["messages"][-1]["content"])
    astore = AsyncStore(store)
    _CLIENT["client"] = LLMClient(
        Endpoint(base_url="http://m/v1", model="m"), StoreCache(astore), transport=s.transport()
    )
    job = Job("test", input_key="input-1", steps=[ask(model="m", template_path=template)])
    try:
        summary = await execute(astore, job, items(12), resources={"model": Resource("model", 4)})
    finally:
        await astore.aclose()
    assert summary.done == 12 and summary.failed == 0
    with store.session() as sess:
        assert sess.scalar(select(func.count()).select_from(RunItem)) == 12
        assert sess.scalar(select(func.count()).select_from(Attempt)) == 12
        traj = item_attempts(sess, summary.run_id, "i3")
        assert traj[0].template_id == "test/ask@1" and len(traj[0].template_hash) == 64
        assert traj[0].response["content"] == "answer to Formalize statement 3"
        row = sess.scalars(select(RunItem).where(RunItem.item == "i3")).one()
        assert row.status == "done" and row.result["answer"].endswith("statement 3")


async def test_spec_identifies_runs(sqlite_store, template):
    s = Scripted(lambda body: "x")
    _CLIENT["client"] = LLMClient(
        Endpoint(base_url="http://m/v1", model="m"), transport=s.transport()
    )
    a = Job("test", "input-1", [ask(model="m", template_path=template)])
    b = Job("test", "input-1", [ask(model="other", template_path=template)])
    assert a.spec_hash != b.spec_hash
    ra = await execute(sqlite_store, a, items(2))
    rb = await execute(sqlite_store, b, items(2))
    again = await execute(sqlite_store, a, items(2))
    assert ra.run_id != rb.run_id and again.run_id == ra.run_id
    assert again.skipped == 2 and again.done == 0
    with sqlite_store.session() as sess:
        assert len(list_runs(sess, "test")) == 2


async def test_failures_recorded_and_retried(sqlite_store, template):
    s = Scripted(lambda body: "x")
    _CLIENT["client"] = LLMClient(
        Endpoint(base_url="http://m/v1", model="m"), transport=s.transport()
    )
    job = Job("test", "input-2", [ask(model="m", fail_on="statement 1", template_path=template)])
    for attempt in range(1, 5):
        summ = await execute(sqlite_store, job, items(3), max_attempts=3)
        assert summ.failed == (1 if attempt <= 3 else 0)
    with sqlite_store.session() as sess:
        row = sess.scalars(select(RunItem).where(RunItem.item == "i1")).one()
        assert row.status == "failed" and row.attempt_count == 3
        assert "test.ask: ValueError: cannot handle 'statement 1'" in row.error


async def test_resume_after_cancel_repeats_no_call(sqlite_store, template):
    """Cancelled mid-run (as a kill would stop it), then resumed: nothing is asked twice."""
    s = Scripted(lambda body: "a " + body["messages"][-1]["content"], delay_s=0.01)
    astore = AsyncStore(sqlite_store)
    _CLIENT["client"] = LLMClient(
        Endpoint(base_url="http://m/v1", model="m"), StoreCache(astore), transport=s.transport()
    )
    job = Job("test", "input-3", [ask(model="m", template_path=template)])
    task = asyncio.create_task(
        execute(astore, job, items(40), resources={"model": Resource("model", 4)})
    )
    while len(s.requests) < 15:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    sent_before = len(s.requests)
    from math2.store import LLMResponse

    with sqlite_store.session() as sess:
        stored = {r.request["messages"][-1]["content"] for r in sess.scalars(select(LLMResponse))}
    summary = await execute(astore, job, items(40), resources={"model": Resource("model", 4)})
    await astore.aclose()
    assert summary.done + summary.skipped == 40
    after = [r["messages"][-1]["content"] for r in s.requests[sent_before:]]
    assert not stored & set(after), "a finished (stored) model call was repeated"
    # only calls still in flight when it stopped (at most the 4 model slots) were asked again
    assert len(s.requests) - 40 <= 4
    assert len(stored) >= 11


async def test_back_pressure_reads_input_lazily(sqlite_store):
    pulled = 0
    finished = 0
    ahead = []

    @step("test.slow")
    def slow():
        async def run(rec: Item, ctx: ItemContext) -> Item:
            nonlocal finished
            async with ctx.slot("lean"):
                await asyncio.sleep(0.002)
            finished += 1
            return rec

        return run

    def source():
        nonlocal pulled
        for it in items(200):
            pulled += 1
            ahead.append(pulled - finished)
            yield it

    job = Job("test-bp", "input-4", [slow()])
    summ = await execute(
        sqlite_store, job, source(), resources={"lean": Resource("lean", 2)}, max_in_flight=8
    )
    assert summ.done == 200
    assert max(ahead) <= 9  # never more than max_in_flight (+ the one being read) open
