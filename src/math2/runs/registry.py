"""Jobs that `math2 runs resume ID` can start again from what the run row recorded.

Each job's module registers its resume function when imported; `resumer(name)` imports the one
module that defines job `name` — a module that does not import is an error naming it and why
(`JobModuleBroken`), never a quiet "cannot be resumed".
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from math2.errors import Math2Error
from math2.runs.lifecycle import CannotResume, Resume

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.runs.progress import RunSummary
    from math2.store import Run, Store

__all__ = ["JOB_MODULES", "CannotResume", "JobModuleBroken", "ResumeFn", "register_job", "resumer"]

#: How a job resumes a run: (its row, the settings, the store, how to resume it) -> its summary.
#: The function passes `resume` on to the job's executor (`math2.runs.execute(resume=…)`), so the
#: run it names is reopened (a changed spec refused unless allowed) on the executor it names.
ResumeFn = Callable[["Run", "Settings", "Store", Resume], Awaitable["RunSummary"]]
_JOBS: dict[str, ResumeFn] = {}

#: The module that registers each resumable job when imported.
JOB_MODULES = {
    "formalize": "math2.roles.formalize",
    "informalize": "math2.roles.informalize",
    "align": "math2.roles.align",
    "align-eval": "math2.roles.align",
    "bindings.check": "math2.roles.align",
    "check": "math2.checks",
    "embed": "math2.retrieval.embed_job",
    "eval": "math2.eval",
    "datasets.reconstruct": "math2.datasets",
    "import": "math2.import_source",  # the import runs of math2.importers.runs
}


class JobModuleBroken(Math2Error):
    """The module of a job does not import (a broken install or a bug): named with its error."""


def register_job(name: str, resume: ResumeFn) -> None:
    """Say how to resume runs of job `name` from their row (params + spec)."""
    _JOBS[name] = resume


def resumer(name: str) -> ResumeFn:
    """How to resume job `name`: CannotResume for a job no module defines, JobModuleBroken when
    its module does not import."""
    if name not in _JOBS and name in JOB_MODULES:
        module = JOB_MODULES[name]
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise JobModuleBroken(
                f"runs of job {name!r} are resumed by {module}, which does not import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    try:
        return _JOBS[name]
    except KeyError:
        raise CannotResume(
            f"runs of job {name!r} cannot be resumed from here (no resumable job of that name)"
        ) from None
