"""A run at one moment (for progress displays) and how it ended, on every executor."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from math2.store.work import RunStatus


class ResourceState(BaseModel):
    """A resource at one moment."""

    capacity: int
    in_use: int
    waiting: int
    utilisation: float


class Progress(BaseModel):
    """A run at one moment, for progress displays."""

    run_id: int
    job: str
    total: int | None = None
    done: int = 0  # items whose steps finished (their result may record a failure)
    failed: int = 0  # items whose step raised
    # done items whose result records a failure (`math2.runs.outcome`'s rule: an eval sample's
    # failure, a check that errored, …): `done - failed_results` items have an answer
    failed_results: int = 0
    running: int = 0
    skipped: int = 0
    duplicates: int = 0
    elapsed_s: float = 0.0
    items_per_s: float = 0.0
    eta_s: float | None = None  # at the rate so far; None before the first item finishes
    # Finished items by their result's outcome (passed, failed, no_lean, refused, …).
    outcomes: dict[str, int] = Field(default_factory=dict)
    retries: int = 0  # model calls sent again (HTTP errors, connection failures, timeouts)
    timeouts: int = 0  # model calls that timed out or lost their connection
    # each stage's share of the time items spent in model calls and Lean checks (0..1)
    stages: dict[str, float] = Field(default_factory=dict)
    resources: dict[str, ResourceState] = Field(default_factory=dict)
    finished: bool = False


class RunSummary(Progress):
    """How a run ended: `done`, or `stopped` early with the reason (an endpoint down: the items
    not finished are left pending for `math2 runs resume`)."""

    status: RunStatus = RunStatus.DONE
    stopped_because: str | None = None


def finished_stats(summary: Progress) -> dict[str, Any]:
    """What a finished run records of its summary (every executor writes these)."""
    return {
        "done": summary.done,
        "failed": summary.failed,
        "failed_results": summary.failed_results,
        "skipped": summary.skipped,
        "duplicates": summary.duplicates,
        "elapsed_s": round(summary.elapsed_s, 3),
        "items_per_s": round(summary.items_per_s, 3),
    }
