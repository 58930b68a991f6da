"""Jobs that `math2 runs resume ID` can start again from what the run row recorded."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from math2.errors import Math2Error

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.runs.engine import Progress, RunSummary
    from math2.store import Run, Store

log = logging.getLogger(__name__)

ResumeFn = Callable[
    ["Run", "Settings", "Store", Callable[["Progress"], None] | None], Awaitable["RunSummary"]
]
_JOBS: dict[str, ResumeFn] = {}

# Modules that register resumable jobs when imported (absent ones are skipped).
_JOB_MODULES = (
    "math2.retrieval.embed_job",
    "math2.roles.formalize",
    "math2.roles.align",
    "math2.roles.informalize",
    "math2.checks",
    "math2.eval",
    "math2.datasets",
    "math2.build",  # the import runs of math2.importers.runs
)


class CannotResume(Math2Error):
    """The run cannot be started again (unknown job, or its input is gone)."""


def register_job(name: str, resume: ResumeFn) -> None:
    """Say how to resume runs of job `name` from their row (params + spec)."""
    _JOBS[name] = resume


def resumer(name: str) -> ResumeFn:
    """How to resume job `name`; CannotResume when no module registered it."""
    if name not in _JOBS:
        for mod in _JOB_MODULES:
            try:
                importlib.import_module(mod)
            except ImportError:
                log.debug("job module %s not importable", mod)
    try:
        return _JOBS[name]
    except KeyError:
        raise CannotResume(
            f"runs of job {name!r} cannot be resumed from here (no resumable job of that name)"
        ) from None
