"""Imports as runs of `math2.runs`: job `import`, input key `source@pin`, two steps as items.

An import writes its data in one transaction (`common.import_transaction`); the run row and its
items (`read`: the data read in full, with its digest; `write`: what was written, counted) are
written in that same transaction, so a finished import and its run are one fact. The run's
lifecycle is `math2.runs.lifecycle`'s: while an import goes, its run is `running` under the
run's lease (`hold`, claimed in a row committed beforehand), so `math2 runs list` tells a live
import from a killed one (`killed`) or a refused one (`failed`, with the error), and a second
import of the same source waits for none: it is refused naming the holder. A killed or failed
import wrote nothing; `math2 runs resume ID` (or `math2 import` / `math2 build` again) starts it
afresh, and a finished one is not repeated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.runs.identity import RunIdentity
from math2.runs.lifecycle import find_run, hold, record_end
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


def import_identity(source: str, pin_key: str) -> RunIdentity:
    """The identity of the import of `source` at a pin: the one definition every path uses."""
    return RunIdentity(job=JOB, key=f"{source}@{pin_key}", spec=import_spec(source))


def mark_step(session: Session, run: Run, step: str, result: dict[str, Any]) -> None:
    """Record one step of an import as a done item of its run (in the import's transaction)."""
    session.flush()
    turns = session.scalar(
        select(RunItem.attempt_count).where(RunItem.run_id == run.id, RunItem.item == step)
    )
    record_end(
        session,
        run.id,
        step,
        attempt_count=(turns or 0) + 1,
        status=ItemStatus.DONE,
        result=result,
        error=None,
        stage=step,
    )


def _identity(store: Store, source: str) -> RunIdentity | None:
    """The identity of the import of `source` at its current pin, or None when there is nothing
    to hold: no pin yet, or the import is done (then the importer decides: nothing to do, or a
    conflict)."""
    from math2.errors import Math2Error
    from math2.importers.common import source_and_pin

    with store.session() as s:
        try:
            _, pin = source_and_pin(s, source)
        except Math2Error:
            return None  # the importer says why
        identity = import_identity(source, pin.key)
        run = find_run(s, identity)
        if run is not None and run.status == RunStatus.DONE:
            return None
        return identity


@contextmanager
def import_run(store: Store, source: str, path: Path | None = None) -> Iterator[None]:
    """Hold the import run of `source` for the block (`math2.runs.lifecycle.hold`): `running`
    under its lease, `failed` with the error when the block raises before the import's
    transaction marked it done. `path` is where `runs resume` reads again."""
    identity = _identity(store, source)
    if identity is None:
        yield
        return
    params = {"path": str(Path(path).resolve())} if path is not None else {}
    with hold(store, identity, params=params):
        yield


ImportFn = Callable[["Store", "SourceEntry", Path], "ImportResult"]


def on_runs(fn: ImportFn) -> ImportFn:
    """An importer whose every run is recorded as a run of `math2.runs` (see `import_run`)."""

    @functools.wraps(fn)
    def run(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
        with import_run(store, entry.name, path):
            return fn(store, entry, path)

    return run
