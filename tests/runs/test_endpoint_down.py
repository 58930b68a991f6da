"""A step that meets a model endpoint that is down (`EndpointDown`, the client's breaker) stops
the run early: no item starts after it, the items not finished stay pending, the run is
`stopped` with the endpoint as its reason, the command's last line names it and exits 1, and a
resume once the endpoint is back finishes the rest without running anything finished again."""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm import Endpoint, LLMClient, MemoryCache, load_template
from math2.llm.types import EndpointDown, LLMError
from math2.runs import (
    ItemContext,
    Job,
    Resume,
    RunServices,
    RunSummary,
    execute,
    register_job,
    step,
)
from math2.store import Run, RunItem, RunSegment, Store

URL = "http://10.255.255.1:9/v1"
DOWN: set[str] = set()  # the items whose step meets the endpoint down (while it is down)


class Rec(BaseModel):
    id: str
    answer: str | None = None


@step("test.down.ask")
def ask(log: str):
    async def run(rec: Rec, ctx: ItemContext[RunServices]) -> Rec:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(rec.id + "\n")
        if rec.id in DOWN:
            raise EndpointDown(
                f"{URL}: 5 calls in a row failed to connect", base_url=URL, consecutive=5
            )
        return rec.model_copy(update={"answer": "ok"})

    return run


def _job(log: Path) -> Job:
    return Job("test.down", "down-input", [ask(log=str(log))])


def _records(n: int = 10) -> list[Rec]:
    return [Rec(id=f"i{k}") for k in range(n)]


async def _resume(run: Run, settings, store: Store, resume: Resume) -> RunSummary:
    log = Path(run.spec["steps"][0]["args"]["log"])
    return await execute(store, _job(log), _records(), max_in_flight=1, total=10, resume=resume)


register_job("test.down", _resume)


def _turns(log: Path) -> collections.Counter[str]:
    return collections.Counter(log.read_text().split())


def test_an_endpoint_down_stops_the_run_and_leaves_its_items_pending(sqlite_store, tmp_path):
    log = tmp_path / "turns.log"
    DOWN.clear()
    DOWN.add("i3")
    summary = asyncio.run(execute(sqlite_store, _job(log), _records(), max_in_flight=1, total=10))
    assert summary.status == "stopped" and URL in (summary.stopped_because or "")
    assert (summary.done, summary.failed) == (3, 0)  # i0..i2; i3 is not a failure
    assert list(_turns(log)) == ["i0", "i1", "i2", "i3"]  # nothing started after it
    with sqlite_store.session() as s:
        run = s.get(Run, summary.run_id)
        assert run.status == "stopped" and URL in run.stats["stopped"]
        assert run.stats["unfinished"] == 7
        items = {r.item: (r.status, r.attempt_count) for r in s.scalars(select(RunItem))}
        seg = s.scalars(select(RunSegment)).one()
    assert items == {"i0": ("done", 1), "i1": ("done", 1), "i2": ("done", 1), "i3": ("pending", 0)}
    assert seg.status == "stopped" and URL in seg.reason
    url = str(sqlite_store.engine.url)
    # still down: `runs resume` stops again, names the endpoint and exits 1
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", str(summary.run_id)])
    assert r.exit_code == 1, r.output
    assert f"run {summary.run_id} stopped early: model endpoint {URL} is down" in r.output
    assert "7 items not finished stay pending" in r.output
    assert f"math2 runs resume {summary.run_id}" in r.output
    # back: the resume finishes the rest, nothing finished runs again
    DOWN.clear()
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", str(summary.run_id)])
    assert r.exit_code == 0, r.output
    assert f"run {summary.run_id}: 7 done, 0 failed, 3 already finished" in r.output
    turns = _turns(log)
    assert all(turns[f"i{k}"] == 1 for k in (0, 1, 2)) and turns["i3"] == 3
    with sqlite_store.session() as s:
        assert s.get(Run, summary.run_id).status == "done"
        statuses = [g.status for g in s.scalars(select(RunSegment).order_by(RunSegment.id))]
    assert statuses == ["stopped", "stopped", "done"]


class DownClient(LLMClient):
    """A client whose breaker is open: every call raises EndpointDown without trying."""

    async def chat(self, *args, **kwargs):
        raise EndpointDown(f"{URL}: 5 calls in a row failed", base_url=URL, consecutive=5)


@dataclass
class ClientServices(RunServices):
    client: LLMClient


@step("test.down.swallow")
def swallow():
    async def run(rec: Rec, ctx: ItemContext[ClientServices]) -> Rec:
        try:
            await ctx.chat(
                ctx.services.client,
                load_template("formalize/generate"),
                {"statement": "x", "hits": [], "previous": None, "feedback": "", "round": 1},
                stage="generate",
            )
        except LLMError:  # a step that carries on after a failed call (as a check does)
            return rec.model_copy(update={"answer": "error"})
        return rec

    return run


def test_a_step_that_swallows_the_error_still_stops_the_run(sqlite_store):
    client = DownClient(Endpoint(base_url=URL, model="m"), MemoryCache())
    summary = asyncio.run(
        execute(
            sqlite_store,
            Job("test.down.swallow", "k", [swallow()]),
            _records(4),
            services=ClientServices(client),
            max_in_flight=1,
        )
    )
    assert summary.status == "stopped" and summary.done == 0
    with sqlite_store.session() as s:
        assert [r.status for r in s.scalars(select(RunItem))] == ["pending"]
        # the breaker made no call: no attempt is recorded for it
        assert s.scalar(select(Run.status)) == "stopped"
