"""How a run came out: which items failed and why, the reasons counted with an example each.

An item failed when it has no answer of its own:
- its step raised (`run_items.status = failed`; the reason is the stored error, e.g. a model
  endpoint that does not answer);
- or its stored result records an error: an eval sample's `failure` (with its `error`), a check
  or informalize verdict `error` (the checks that errored, with their reason), an align pair left
  `unjudged` (no readable verdict).
A negative answer is not a failure: a formalize item whose rounds passed no statement, a pair
the checks judged unfaithful, a pair the judge called `different` — the run did its work.

Every command that runs a job (formalize, informalize, check, eval run, align) reads this one
breakdown at its end: `math2.cli._outcome` prints the most common reasons and exits non-zero
when every item failed, or when the run stopped early (a model endpoint down: `stopped_because`
names it, and its unfinished items are pending for `math2 runs resume`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.store.work import ItemStatus, Run, RunItem, RunStatus

REASON_CHARS = 300  # a reason longer than this is cut (grouping and printing)


class Reason(BaseModel):
    """One failure reason: how many items failed with it, and one of them."""

    reason: str
    count: int
    example: str


class RunOutcome(BaseModel):
    """A run's items: how many, how many failed, and the reasons, most common first."""

    run_id: int
    total: int = 0
    failed: int = 0
    reasons: list[Reason] = Field(default_factory=list)
    status: str = RunStatus.DONE.value
    stopped_because: str | None = None  # a run that stopped early: why (the endpoint down)
    unfinished: int | None = None  # its items not finished then (None: not known)

    @property
    def stopped(self) -> bool:
        return self.status == RunStatus.STOPPED

    @property
    def all_failed(self) -> bool:
        """Every item of the run failed (and it had at least one)."""
        return self.total > 0 and self.failed == self.total


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _check_errors(outcomes: list[Any]) -> str | None:
    for o in outcomes:
        if isinstance(o, dict) and o.get("verdict") == "error":
            who = f"{o.get('check', 'check')}" + (f" ({o['checker']})" if o.get("checker") else "")
            why = (o.get("evidence") or {}).get("reason") or "error"
            return f"{who}: {why}"
    return None


def failure_reason(status: str, error: str | None, result: dict[str, Any] | None) -> str | None:
    """Why an item failed, or None when it has an answer of its own (see the module's rule)."""
    if status == ItemStatus.FAILED:
        return _cut(error or "failed (no error recorded)")
    if status != ItemStatus.DONE:
        return None
    r = result if isinstance(result, dict) else {}
    if r.get("failure"):
        return _cut(str(r["failure"]) + (f": {r['error']}" if r.get("error") else ""))
    if r.get("verdict") == "error":
        why = _check_errors(r.get("outcomes") or [])
        if why is None:
            why = "checks errored: " + (", ".join(map(str, r.get("failed_checks") or [])) or "?")
        return _cut(why)
    if r.get("outcome") == "unjudged":
        return _cut("unjudged: " + str(r.get("error") or "no readable verdict"))
    return None


def run_outcome(session: Session, run_id: int) -> RunOutcome:
    """The failure breakdown of run `run_id` over all its items (this time's and earlier)."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    total = 0
    rows = session.execute(
        select(RunItem.item, RunItem.status, RunItem.error, RunItem.result)
        .where(RunItem.run_id == run_id)
        .order_by(RunItem.item)
    )
    for item, status, error, result in rows:
        total += 1
        reason = failure_reason(str(status), error, result)
        if reason is not None:
            counts[reason] += 1
            examples.setdefault(reason, item)
    run = session.get(Run, run_id)
    stats = (run.stats or {}) if run is not None else {}
    return RunOutcome(
        run_id=run_id,
        status=str(run.status) if run is not None else RunStatus.DONE.value,
        stopped_because=stats.get("stopped"),
        unfinished=stats.get("unfinished"),
        total=total,
        failed=sum(counts.values()),
        reasons=[
            Reason(reason=r, count=n, example=examples[r])
            for r, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    )
