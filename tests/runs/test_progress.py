"""Progress without a terminal: one line every N seconds with outcomes, ETA, retries."""

from __future__ import annotations

import io

from rich.console import Console

from math2.cli._progress import ProgressDisplay
from math2.runs import Progress


def test_lines_without_a_terminal_carry_outcomes_eta_and_retries() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=300)
    with ProgressDisplay(console, every_s=0.0) as show:
        show(Progress(run_id=3, job="formalize", total=16, running=4, eta_s=None))
        show(
            Progress(
                run_id=3,
                job="formalize",
                total=16,
                done=8,
                outcomes={"passed": 2, "no_lean": 5, "failed": 1},
                items_per_s=0.5,
                eta_s=16.0,
                retries=1,
                timeouts=1,
            )
        )
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("run 3 formalize: done 0/16") and "ETA -" in lines[0]
    assert "done 8/16 (failed 1, no_lean 5, passed 2)" in lines[1]
    assert "ETA 16s" in lines[1] and "retries 1" in lines[1] and "timeouts 1" in lines[1]


def test_the_end_of_a_run_is_one_line_too_not_a_table() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=80)
    with ProgressDisplay(console, every_s=3600.0) as show:
        show(Progress(run_id=2, job="check", total=2, done=2, finished=True, outcomes={"pass": 2}))
    lines = buf.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("run 2 check: done 2/2 (pass 2)"), lines


def test_lines_are_spaced_by_every_s() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=300)
    show = ProgressDisplay(console, every_s=3600.0)
    for i in range(5):
        show(Progress(run_id=1, job="j", total=5, done=i))
    assert len(buf.getvalue().splitlines()) == 1


def test_stage_shares_in_every_line() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=300)
    p = Progress(run_id=4, job="formalize", total=2, stages={"generate": 0.75, "compile": 0.25})
    with ProgressDisplay(console, every_s=0.0) as show:
        show(p)
        show(p.model_copy(update={"finished": True}))
    text = buf.getvalue()
    assert "stages generate 75% compile 25%" in text.splitlines()[0]
    lines = text.splitlines()
    assert "stages generate 75% compile 25%" in lines[-1]  # the final line keeps the shares


async def test_stage_share_counts_calls_not_cache_hits(sqlite_store) -> None:
    from math2.runs.context import STAGE_SECONDS, ItemContext, RunServices, stage_share
    from math2.store.aio import AsyncStore
    from math2.store.work import Run

    with sqlite_store.session() as s:
        run = Run(job="j", key="k", spec_hash="h")
        s.add(run)
        s.flush()
        run_id = run.id
    astore = AsyncStore(sqlite_store)
    STAGE_SECONDS.pop(run_id, None)  # the engine starts each execution afresh
    ctx = ItemContext(run_id, "a", astore, {}, RunServices())
    await ctx.attempt(stage="generate", duration_s=3.0)
    await ctx.attempt(stage="compile", round=1, duration_s=1.0)
    await ctx.attempt(stage="judge", duration_s=5.0, cached=True)  # a cache hit: no busy time
    await astore.aclose()
    assert stage_share(run_id) == {"compile": 0.25, "generate": 0.75}
