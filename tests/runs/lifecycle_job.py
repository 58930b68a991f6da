"""A slow job for the lifecycle tests, and a driver process for it:
`python -m tests.runs.lifecycle_job DB LOG N DELAY_S` runs (or resumes) it, one line per item
turn appended to LOG; a run another live driver holds exits 2 naming the holder (as the CLI
does). With `HOLD_ENV` naming a file, no item ends before that file exists (a test keeps the
driver alive while it asks it things, whatever the machine's load)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from pydantic import BaseModel

from math2.errors import Math2Error
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
from math2.store import Run, Store

JOB = "test.lifecycle"
HOLD_ENV = "MATH2_TEST_LIFECYCLE_HOLD"


class Rec(BaseModel):
    id: str
    n: int
    failure: str | None = None


@step("test.lifecycle.slow")
def slow(log: str, delay_s: float = 0.0, fail_results: bool = False):
    async def run(rec: Rec, ctx: ItemContext[RunServices]) -> Rec:
        with open(log, "a", encoding="utf-8") as fh:  # each turn of each item, once
            fh.write(rec.id + "\n")
        await asyncio.sleep(delay_s)
        if hold := os.environ.get(HOLD_ENV):
            while not Path(hold).exists():
                await asyncio.sleep(0.05)
        await ctx.attempt(stage="slow", verdict="ok")
        return rec.model_copy(update={"failure": "no answer" if fail_results else None})

    return run


def job(log: str, delay_s: float, fail_results: bool = False) -> Job:
    return Job(JOB, "lifecycle-input", [slow(log=log, delay_s=delay_s, fail_results=fail_results)])


def records(n: int) -> list[Rec]:
    return [Rec(id=f"i{k:02d}", n=k) for k in range(n)]


def run(store: Store, log: str, n: int, delay_s: float, **kw) -> RunSummary:
    params = {"log": log, "n": n, "delay_s": delay_s}
    return asyncio.run(
        execute(
            store, job(log, delay_s, kw.pop("fail_results", False)), records(n), params=params, **kw
        )
    )


async def _resume(run_row: Run, settings, store: Store, resume: Resume) -> RunSummary:
    p = run_row.params
    args = run_row.spec["steps"][0]["args"]
    return await execute(
        store,
        job(p["log"], p["delay_s"], args.get("fail_results", False)),
        records(p["n"]),
        params=p,
        max_in_flight=4,
        on_progress=resume.on_progress,
        resume=resume,
    )


register_job(JOB, _resume)


def main() -> None:
    db, log, n, delay = sys.argv[1:5]
    try:
        summary = run(Store(db), log, int(n), float(delay), max_in_flight=4)
    except Math2Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    print(summary.model_dump_json())


if __name__ == "__main__":
    main()
