"""The end of every command that runs a job: the most common failure reasons, counted with an
example item each; exit code 1 when every item of the run failed, or when the run stopped early
(a model endpoint down: the line names it, and its unfinished items wait for `math2 runs resume`)
(`math2.runs.outcome`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from math2.cli._common import err, fail

if TYPE_CHECKING:
    from math2.store import Store

TOP_REASONS = 3  # reasons printed, the most common first


def finish_run(store: Store, run_id: int, noun: str = "items") -> None:
    """Print why items of run `run_id` failed (to stderr); exit 1 when all of them did or the
    run stopped early."""
    from math2.runs import run_outcome

    with store.session() as s:
        outcome = run_outcome(s, run_id)
    if outcome.failed:
        err.print(
            f"run {run_id}: {outcome.failed} of {outcome.total} {noun} failed; "
            + ("the most common reasons:" if len(outcome.reasons) > 1 else "the reason:"),
            highlight=False,
        )
        for r in outcome.reasons[:TOP_REASONS]:
            err.print(escape(f"  {r.count} × {r.reason} (e.g. {r.example})"), highlight=False)
        if len(outcome.reasons) > TOP_REASONS:
            rest = sum(r.count for r in outcome.reasons[TOP_REASONS:])
            err.print(f"  {rest} more with {len(outcome.reasons) - TOP_REASONS} other reasons")
    if outcome.stopped:
        left = (
            f"{outcome.unfinished} {noun} not finished"
            if outcome.unfinished is not None
            else f"the {noun} not finished"
        )
        raise fail(
            escape(
                f"run {run_id} stopped early: {outcome.stopped_because or 'stopped'}; {left} "
                f"stay pending: `math2 runs resume {run_id}` goes on from there"
            ),
            code=1,
        )
    if outcome.all_failed:
        raise fail(
            escape(
                f"run {run_id}: every {noun.rstrip('s')} failed (each one's reason: "
                f"`math2 runs show {run_id}`)"
            ),
            code=1,
        )
