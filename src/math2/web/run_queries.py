"""Read-only queries behind the run pages, kept fast for runs of many thousands of items: the
totals are counted in the database (never by loading every item), the items come a page at a
time by keyset (`after` the last item shown), and a trajectory reads only its own attempts."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from math2.store import Attempt, ItemStatus, Run, RunItem, RunStatus

PASS_VERDICTS = frozenset({"pass", "passed", "accepted"})
PAGE = 200


def runs(s: Session, limit: int = 200) -> list[Run]:
    """The newest runs."""
    return list(s.execute(select(Run).order_by(Run.id.desc()).limit(limit)).scalars())


def _first_pass(run_id: int, items: list[str] | None = None):
    """Per item, the smallest round of its attempts with a passing verdict."""
    q = select(Attempt.item.label("item"), func.min(Attempt.round).label("r")).where(
        Attempt.run_id == run_id, func.lower(Attempt.verdict).in_(PASS_VERDICTS)
    )
    if items is not None:
        q = q.where(Attempt.item.in_(items))
    return q.group_by(Attempt.item)


def _pass_round(s: Session, first_pass):
    """The pass round of an item as SQL: the integer `passed_round` its role wrote into the item's
    result when the key is there (a null there means it never passed), else `first_pass.r`."""
    value = RunItem.result["passed_round"]
    if s.get_bind().dialect.name == "postgresql":
        kind, integer = func.json_typeof(value), ("number",)
    else:
        kind, integer = func.json_type(RunItem.result, "$.passed_round"), ("integer",)
    return case(
        (kind.is_(None), first_pass.c.r),
        (kind.in_(integer), value.as_integer()),
        else_=None,
    )


def _totals(s: Session, run_id: int) -> dict:
    """The counts of a run: per state, per stage, per pass round, and its attempts' tokens."""
    fp = _first_pass(run_id).subquery()
    pr = _pass_round(s, fp)
    rounds: Counter[str] = Counter()
    states: Counter[str] = Counter()
    for r, status, n in s.execute(
        select(pr, RunItem.status, func.count())
        .select_from(RunItem)
        .outerjoin(fp, fp.c.item == RunItem.item)
        .where(RunItem.run_id == run_id)
        .group_by(pr, RunItem.status)
    ):
        states[status] += n
        if r is not None:
            rounds[str(r)] += n
        else:
            unfinished = status in (ItemStatus.PENDING.value, ItemStatus.RUNNING.value)
            rounds["not yet" if unfinished else "never"] += n
    stages = dict(
        s.execute(
            select(RunItem.stage, func.count())
            .where(RunItem.run_id == run_id, RunItem.stage.is_not(None))
            .group_by(RunItem.stage)
        ).all()
    )
    ordered = sorted((k for k in rounds if k.isdigit()), key=int)
    distribution = [(k, rounds[k]) for k in [*ordered, "never", "not yet"] if rounds[k]]
    tokens = s.execute(
        select(func.count(), func.sum(Attempt.tokens_in), func.sum(Attempt.tokens_out)).where(
            Attempt.run_id == run_id
        )
    ).one()
    return {
        "total": sum(states.values()),
        "done": states.get("done", 0),
        "states": dict(sorted(states.items())),
        "stages": dict(sorted(stages.items())),
        "rounds": distribution,
        "max_round": max((n for _, n in distribution), default=0),
        "attempts": tokens[0] or 0,
        "tokens_in": tokens[1] or 0,
        "tokens_out": tokens[2] or 0,
    }


def run_view(
    s: Session,
    run_id: int,
    after: str | None = None,
    page: int = PAGE,
    cache: dict | None = None,
):
    """Progress, per-state counts, the pass-round distribution and one page of items of a run.

    The pass round of an item is the `passed_round` its role wrote into the item's result (the
    formalize role does); for a job that does not, the smallest `round` of its attempts with a
    passing verdict (pass/passed/accepted). Finished items that never passed count as `never`,
    pending or running ones as `not yet`. Items are ordered by name; `after` is the last item
    of the previous page.

    With `cache` (the app's), the totals of a run that is no longer running are kept, keyed by
    its status and finish time: a resumed run is `running` again (counted live), and finishing
    again sets a new finish time.
    """
    run = s.get(Run, run_id)
    if run is None:
        return None
    totals = None
    stamp = None
    if cache is not None and run.status != RunStatus.RUNNING.value:
        stamp = (run.status, run.finished_at)
        hit = cache.get(run_id)
        totals = hit[1] if hit is not None and hit[0] == stamp else None
    if totals is None:
        totals = _totals(s, run_id)
        if stamp is not None:
            if len(cache) >= 64:
                cache.pop(next(iter(cache)))
            cache[run_id] = (stamp, totals)
    q = select(RunItem).where(RunItem.run_id == run_id)
    if after is not None:
        q = q.where(RunItem.item > after)
    items = s.execute(q.order_by(RunItem.item).limit(page + 1)).scalars().all()
    more = len(items) > page
    items = items[:page]
    shown = [it.item for it in items]
    page_fp = _first_pass(run_id, shown).subquery()
    page_rounds = (
        dict(
            s.execute(
                select(RunItem.item, _pass_round(s, page_fp))
                .outerjoin(page_fp, page_fp.c.item == RunItem.item)
                .where(RunItem.run_id == run_id, RunItem.item.in_(shown))
            ).all()
        )
        if shown
        else {}
    )
    return {
        "run": run,
        **totals,
        "items": [{"it": it, "pass_round": page_rounds.get(it.item)} for it in items],
        "after": after,
        "next_after": shown[-1] if more else None,
    }


def trajectory(s: Session, run_id: int, item: str) -> list[Attempt]:
    """Every attempt of one item, in order (read through the attempts' unique index)."""
    return list(
        s.execute(
            select(Attempt)
            .where(Attempt.run_id == run_id, Attempt.item == item)
            .order_by(Attempt.round, Attempt.stage, Attempt.sample, Attempt.id)
        ).scalars()
    )


def item_of(s: Session, run_id: int, item: str) -> RunItem | None:
    """One item of a run (its state for the trajectory page)."""
    return s.scalar(select(RunItem).where(RunItem.run_id == run_id, RunItem.item == item))
