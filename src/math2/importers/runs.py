"""Imports as runs of `math2.runs`: job `import`, input key `source@pin`, two steps as items.

An import writes its data in one transaction (`common.import_transaction`); the run row and its
items (`read`: the data read in full, with its digest; `write`: what was written, counted) are
written in that same transaction, so a finished import and its run are one fact. While an
import goes, its run is `running` in a row committed beforehand and held under the run's lock,
so `math2 runs list` tells a live import from a killed one (`killed`) or a refused one
(`failed`, with the error). A killed or failed import wrote nothing; `math2 runs resume ID`
(or `math2 import` / `math2 build` again) starts it afresh, and a finished one is not repeated.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.llm.types import canonical
from math2.runs.queries import run_lock_name
from math2.store.lock import hold_lock
from math2.store.work import ItemStatus, Run, RunItem, RunStatus

if TYPE_CHECKING:
    from math2.importers.registry import ImportResult
    from math2.sources.manifest import SourceEntry
    from math2.store import Store

JOB = "import"
STEPS = ("read", "write")


def import_spec(source: str) -> dict[str, Any]:
    """The spec of an import run (the shape of a `math2.runs` job's spec)."""
    steps = [{"name": f"import.{step}", "args": {"source": source}} for step in STEPS]
    return {"version": 1, "steps": steps}


def spec_hash(spec: dict[str, Any]) -> str:
    """SHA-256 of the canonical spec (as `math2.runs.Job.spec_hash`)."""
    return hashlib.sha256(canonical(spec).encode("utf-8")).hexdigest()


def mark_step(session: Session, run: Run, step: str, result: dict[str, Any]) -> None:
    """Record one step of an import as a done item of its run (in the import's transaction)."""
    session.flush()
    row = session.scalar(select(RunItem).where(RunItem.run_id == run.id, RunItem.item == step))
    if row is None:
        row = RunItem(run_id=run.id, item=step)
        session.add(row)
    row.status = ItemStatus.DONE
    row.stage = step
    row.error = None
    row.result = result
    row.attempt_count = (row.attempt_count or 0) + 1
    row.finished_at = dt.datetime.now(dt.UTC)


def _open(store: Store, source: str, path: Path | None = None) -> int | None:
    """The id of the import run of `source` at its current pin, marked running (committed),
    or None when there is nothing to mark: no pin yet, or the import is done (then the importer
    decides: nothing to do, or a conflict)."""
    from math2.errors import Math2Error
    from math2.importers.common import source_and_pin

    with store.session() as s:
        try:
            _, pin = source_and_pin(s, source)
        except Math2Error:
            return None  # the importer says why
        key = f"{source}@{pin.key}"
        run = s.scalar(select(Run).where(Run.job == JOB, Run.key == key))
        if run is not None and run.status == RunStatus.DONE:
            return None
        spec = import_spec(source)
        if run is None:
            run = Run(job=JOB, key=key, params={})
            s.add(run)
        if path is not None:  # where `runs resume` reads again
            run.params = {**(run.params or {}), "path": str(Path(path).resolve())}
        run.spec, run.spec_hash = spec, spec_hash(spec)
        run.status, run.finished_at = RunStatus.RUNNING, None
        s.flush()
        return run.id


def _failed(store: Store, run_id: int, exc: BaseException) -> None:
    with store.session() as s:
        run = s.get(Run, run_id)
        if run is not None and run.status == RunStatus.RUNNING:
            run.status = RunStatus.FAILED
            run.finished_at = dt.datetime.now(dt.UTC)
            run.stats = {"error": f"{type(exc).__name__}: {exc}"[:2000]}


@contextmanager
def import_run(store: Store, source: str, path: Path | None = None) -> Iterator[None]:
    """Hold the import run of `source` for the block: `running` under its lock, `failed` with
    the error when the block raises before the import's transaction marked it done."""
    run_id = _open(store, source, path)
    if run_id is None:
        yield
        return
    with hold_lock(store, run_lock_name(run_id), wait=False):
        try:
            yield
        except BaseException as exc:
            _failed(store, run_id, exc)
            raise


ImportFn = Callable[["Store", "SourceEntry", Path], "ImportResult"]


def on_runs(fn: ImportFn) -> ImportFn:
    """An importer whose every run is recorded as a run of `math2.runs` (see `import_run`)."""

    @functools.wraps(fn)
    def run(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
        with import_run(store, entry.name, path):
            return fn(store, entry, path)

    return run
