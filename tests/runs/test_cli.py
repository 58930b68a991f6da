"""`math2 runs list | show | resume` on a store with a run of a registered job."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel
from typer.testing import CliRunner

from math2.cli import app
from math2.runs import ItemContext, Job, execute, register_job, step


class Rec(BaseModel):
    id: str
    n: int


@step("test.cli.square")
def square(fail_odd: bool = True):
    async def run(rec: Rec, ctx: ItemContext) -> Rec:
        await ctx.attempt(stage="square", verdict="ok")
        if fail_odd and rec.n % 2:
            raise RuntimeError(f"odd {rec.n}")
        return rec.model_copy(update={"n": rec.n * rec.n})

    return run


def _records(params: dict) -> list[Rec]:
    return [Rec(id=f"r{i}", n=i) for i in range(params["count"])]


async def _resume(run, settings, store, resume):
    job = Job(run.job, run.key, [square(**run.spec["steps"][0]["args"])])
    return await execute(
        store,
        job,
        _records(run.params),
        params=run.params,
        on_progress=resume.on_progress,
        resume=resume,
    )


register_job("test-cli-square", _resume)


def test_list_show_resume(sqlite_store):
    url = str(sqlite_store.engine.url)
    job = Job("test-cli-square", "five", [square(fail_odd=True)])
    summary = asyncio.run(execute(sqlite_store, job, _records({"count": 5}), params={"count": 5}))
    assert summary.done == 3 and summary.failed == 2
    runner = CliRunner()
    r = runner.invoke(app, ["--db", url, "runs", "list"])
    assert r.exit_code == 0, r.output
    assert "test-cli-square" in r.output and "done 3" in r.output and "failed 2" in r.output
    r = runner.invoke(app, ["--db", url, "runs", "show", str(summary.run_id)])
    assert r.exit_code == 0 and "RuntimeError: odd 1" in r.output and "attempts: 5" in r.output
    r = runner.invoke(app, ["--db", url, "runs", "show", str(summary.run_id), "--item", "r2"])
    assert r.exit_code == 0 and "square" in r.output and "verdict ok" in r.output
    r = runner.invoke(app, ["--db", url, "runs", "resume", str(summary.run_id)])
    assert r.exit_code == 0, r.output
    assert "0 done, 2 failed, 3 already finished" in r.output
    r = runner.invoke(app, ["--db", url, "runs", "show", "999"])
    assert r.exit_code == 2 and "no run 999" in r.output


def test_resume_unknown_job(sqlite_store):
    url = str(sqlite_store.engine.url)
    with sqlite_store.session() as s:
        from math2.store import Run

        s.add(Run(job="no-such-job", key="x"))
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", "1"])
    assert r.exit_code == 2 and "cannot be resumed" in r.output
