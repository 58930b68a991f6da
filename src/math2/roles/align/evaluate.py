"""Precision and recall of the align judge against pairs people made.

Positives are human-made pairs (Mathlib's `@[stacks]` attributes, the theorem lists' Metamath ↔
Lean entries). Each positive gives two negatives: a hard one (the top search hit for its Lean
declaration's name and docstring that is not that declaration) and a random one (another
positive's declaration). The judge runs as the `align.judge` step on math2.runs (cached,
resumable); a verdict `same` is a positive prediction. An unreadable answer is no `same`: it
counts against recall on a positive, and is also reported on its own.

A run of job `align-eval` records its model, reply budget and labelled pairs, so `math2 runs
resume` finishes a killed one from its record (no finished call asked again).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.config import Settings
from math2.roles.align.candidates import HumanPair, Searcher
from math2.roles.align.job import align_judge
from math2.roles.align.schemas import AlignOutcome, AlignPair, AlignResult, Side
from math2.roles.align.sides import lean_mention, lean_side
from math2.runs import CannotResume, Job, Progress, Resume, RunSummary, register_job
from math2.services import ServiceSpec, execute_role, resolve_spec
from math2.store import ItemStatus, Run, RunItem, Store

JOB = "align-eval"


class LabelledPair(BaseModel):
    """A pair with the truth: positive (a person made it), hard or random negative."""

    pair: AlignPair
    label: bool
    kind: str  # positive | hard | random


class Scores(BaseModel):
    """The confusion counts and the figures."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    unjudged: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def other_side(s: Session, hp: HumanPair) -> Side:
    """The non-Lean side of a human pair as the store holds it."""
    if hp.system == "metamath":
        m = lean_mention(s, "metamath", hp.other, None)
        if m is not None:
            text = "\n".join(x for x in (m.docstring or "", m.statement or "") if x)
            return Side(system="metamath", name=hp.other, text=text)
    # the store holds no Stacks text: the tag is all the judge sees of that side
    return Side(system=hp.system, name=hp.other, text=f"{hp.system} {hp.other}")


def labelled_pairs(
    s: Session, positives: list[HumanPair], search: Searcher | None, seed: int = 0
) -> list[LabelledPair]:
    """Each positive, its hard negative (when a search is given) and a random negative."""
    rng = random.Random(seed)
    names = [p.lean for p in positives]
    out: list[LabelledPair] = []
    for i, hp in enumerate(positives):
        left = other_side(s, hp)
        wanted = [("positive", hp.lean, True)]
        if search is not None:
            m = lean_mention(s, "lean4", hp.lean, None)
            query = " ".join(x for x in (hp.lean.replace(".", " "), m and m.docstring) if x)
            wrong = [n for n, _ in search(query, 5) if n != hp.lean]
            if wrong:
                wanted.append(("hard", wrong[0], False))
        others = [n for n in names if n != hp.lean]
        if others:
            wanted.append(("random", rng.choice(others), False))
        for kind, lean, label in wanted:
            pair = AlignPair(
                id=f"{kind}:{i}:{hp.other}:{lean}",
                crosswalk_id=0,
                dataset=hp.dataset,
                left=left,
                right=lean_side(s, "lean4", lean, None),
            )
            out.append(LabelledPair(pair=pair, label=label, kind=kind))
    return out


def score(pairs: list[LabelledPair], results: dict[str, AlignResult]) -> Scores:
    """Confusion counts: a missing or unreadable result is never a `same`."""
    tp = fp = fn = tn = unjudged = 0
    for lp in pairs:
        r = results.get(lp.pair.id)
        if r is None or r.outcome is AlignOutcome.UNJUDGED:
            unjudged += 1
        said_same = r is not None and r.outcome is AlignOutcome.ACCEPTED
        if lp.label:
            tp, fn = (tp + 1, fn) if said_same else (tp, fn + 1)
        else:
            fp, tn = (fp + 1, tn) if said_same else (fp, tn + 1)
    return Scores(n=len(pairs), tp=tp, fp=fp, fn=fn, tn=tn, unjudged=unjudged)


async def judge_run(
    settings: Settings,
    store: Store,
    model: str,
    pairs: list[LabelledPair],
    *,
    max_tokens: int = 768,
    on_progress: Callable[[Progress], None] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Run the judge step over the pairs as a run of job `align-eval` in `store` (or resume the
    run of these very pairs); the run records what `_resume` needs."""
    spec = resolve_spec(settings, store, ServiceSpec(judges=(model,)))
    key = hashlib.sha256("\n".join(lp.pair.model_dump_json() for lp in pairs).encode()).hexdigest()
    return await execute_role(
        settings,
        store,
        spec,
        Job(JOB, key, [align_judge(model=model, max_tokens=max_tokens)]),
        [lp.pair for lp in pairs],
        resources=lambda limiter: {"model": limiter(model)},
        params={
            "model": model,
            "max_tokens": max_tokens,
            "pairs": [lp.model_dump(mode="json") for lp in pairs],
        },
        total=len(pairs),
        on_progress=on_progress,
        resume=resume,
    )


def run_results(store: Store, run_id: int) -> dict[str, AlignResult]:
    """The verdict of every pair the run finished (this time or before a kill), by pair id; a
    failed or never-finished pair has none (`score` counts it unjudged)."""
    with store.session() as s:
        rows = s.scalars(
            select(RunItem.result).where(
                RunItem.run_id == run_id, RunItem.status == ItemStatus.DONE
            )
        ).all()
    out: dict[str, AlignResult] = {}
    for row in rows:
        try:
            res = AlignResult.model_validate(row)
        except ValidationError:
            continue  # an unreadable stored result is no verdict
        out[res.id] = res
    return out


async def judge_pairs(
    settings: Settings, store: Store, model: str, pairs: list[LabelledPair], **kw: Any
) -> dict[str, AlignResult]:
    """Judge the pairs (`judge_run`, whose keywords `kw` are); every verdict of the run, by
    pair id."""
    summary = await judge_run(settings, store, model, pairs, **kw)
    return run_results(store, summary.run_id)


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    resume.local_only(JOB)
    params = run.params or {}
    if not params.get("pairs") or not params.get("model"):
        raise CannotResume(f"run {run.id}: it recorded no pairs to judge (made before resumers)")
    try:
        pairs = [LabelledPair.model_validate(p) for p in params["pairs"]]
    except ValidationError as exc:
        raise CannotResume(f"run {run.id}: its recorded pairs are unreadable ({exc})") from exc
    return await judge_run(
        settings,
        store,
        params["model"],
        pairs,
        max_tokens=int(params.get("max_tokens") or 768),
        on_progress=resume.on_progress,
        resume=resume,
    )


register_job(JOB, _resume)
