"""The end of every command that runs a job: the most common failure reasons, counted with an
example item each, and exit code 1 when every item of the run failed (`math2.runs.outcome`)."""

from __future__ import annotations

from rich.markup import escape

from math2.cli._common import err, fail

TOP_REASONS = 3  # reasons printed, the most common first


def finish_run(store, run_id: int, noun: str = "items") -> None:
    """Print why items of run `run_id` failed (to stderr); exit 1 when all of them did."""
    from math2.runs import run_outcome

    with store.session() as s:
        outcome = run_outcome(s, run_id)
    if not outcome.failed:
        return
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
    if outcome.all_failed:
        raise fail(
            escape(
                f"run {run_id}: every {noun.rstrip('s')} failed (each one's reason: "
                f"`math2 runs show {run_id}`)"
            ),
            code=1,
        )
