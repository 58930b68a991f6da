"""One engine for every long job: typed records through registered steps, streaming, resumable.

    from math2.runs import Job, ItemContext, execute, step
    from math2.util.limits import Resource

    @step("double")
    def double(factor: int = 2):
        async def run(rec: Item, ctx: ItemContext) -> Item:
            async with ctx.slot("model"):
                ...
            return rec.model_copy(update={"x": rec.x * factor})
        return run

    job = Job("demo", input_key=digest_of_input, steps=[double(factor=3)])
    summary = await execute(store, job, records, resources={"model": Resource("model", 8)})

A run is identified by job + input key + spec hash (the steps' names and arguments, the Lean and
the models its services report): two models, two Leans or two settings are two runs side by
side; the same job over the same input on the same Lean resumes its run. One lifecycle
(`math2.runs.lifecycle`: claim with a lease, skip, record, finish, resume) serves every
executor.
Every model call goes through `ItemContext.chat/structured` and every Lean check through
`ItemContext.lean`: each is an attempt row, and each is answered from the LLM response cache or
the Lean result cache when it was made before, so a killed run repeats nothing it finished.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# The names below are imported on first use (`__getattr__`), so a process that needs one module
# of the package (a Ray run's Lean actor: `math2.runs.ray_lean`) does not import the engine, the
# store's models and the model clients with it.
if TYPE_CHECKING:
    from math2.runs.context import ItemContext, RunServices, RunStore
    from math2.runs.engine import execute, run_item
    from math2.runs.identity import Provenance, RunIdentity, run_identity, spec_changes
    from math2.runs.lease import RunHeld
    from math2.runs.lifecycle import (
        CannotResume,
        ClaimedRun,
        Executor,
        ItemEnd,
        LeaseLost,
        Resume,
        SpecChanged,
        drive,
        find_run,
        hold,
    )
    from math2.runs.outcome import Reason, RunOutcome, run_outcome
    from math2.runs.outputs import record_agent_text
    from math2.runs.progress import Progress, ResourceState, RunSummary
    from math2.runs.queries import (
        AttemptRow,
        RunDetail,
        RunRow,
        SegmentRow,
        item_attempts,
        list_runs,
        run_detail,
    )
    from math2.runs.registry import JobModuleBroken, ResumeFn, register_job, resumer
    from math2.runs.spec import Job, Record, Step, StepSpec, registered_steps, step
    from math2.util.limits import Resource

_LAZY = {
    "AttemptRow": "math2.runs.queries",
    "CannotResume": "math2.runs.lifecycle",
    "ClaimedRun": "math2.runs.lifecycle",
    "Executor": "math2.runs.lifecycle",
    "ItemContext": "math2.runs.context",
    "ItemEnd": "math2.runs.lifecycle",
    "Job": "math2.runs.spec",
    "JobModuleBroken": "math2.runs.registry",
    "LeaseLost": "math2.runs.lifecycle",
    "Progress": "math2.runs.progress",
    "Provenance": "math2.runs.identity",
    "Reason": "math2.runs.outcome",
    "Record": "math2.runs.spec",
    "Resource": "math2.util.limits",
    "ResourceState": "math2.runs.progress",
    "Resume": "math2.runs.lifecycle",
    "ResumeFn": "math2.runs.registry",
    "RunDetail": "math2.runs.queries",
    "RunHeld": "math2.runs.lease",
    "RunIdentity": "math2.runs.identity",
    "RunOutcome": "math2.runs.outcome",
    "RunRow": "math2.runs.queries",
    "RunServices": "math2.runs.context",
    "RunStore": "math2.runs.context",
    "RunSummary": "math2.runs.progress",
    "SegmentRow": "math2.runs.queries",
    "SpecChanged": "math2.runs.lifecycle",
    "Step": "math2.runs.spec",
    "StepSpec": "math2.runs.spec",
    "drive": "math2.runs.lifecycle",
    "execute": "math2.runs.engine",
    "find_run": "math2.runs.lifecycle",
    "hold": "math2.runs.lifecycle",
    "item_attempts": "math2.runs.queries",
    "list_runs": "math2.runs.queries",
    "record_agent_text": "math2.runs.outputs",
    "register_job": "math2.runs.registry",
    "registered_steps": "math2.runs.spec",
    "resumer": "math2.runs.registry",
    "run_detail": "math2.runs.queries",
    "run_identity": "math2.runs.identity",
    "run_item": "math2.runs.engine",
    "run_outcome": "math2.runs.outcome",
    "spec_changes": "math2.runs.identity",
    "step": "math2.runs.spec",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AttemptRow",
    "CannotResume",
    "ClaimedRun",
    "Executor",
    "ItemContext",
    "ItemEnd",
    "Job",
    "JobModuleBroken",
    "LeaseLost",
    "Progress",
    "Provenance",
    "Reason",
    "Record",
    "Resource",
    "ResourceState",
    "Resume",
    "ResumeFn",
    "RunDetail",
    "RunHeld",
    "RunIdentity",
    "RunOutcome",
    "RunRow",
    "RunServices",
    "RunStore",
    "RunSummary",
    "SegmentRow",
    "SpecChanged",
    "Step",
    "StepSpec",
    "drive",
    "execute",
    "find_run",
    "hold",
    "item_attempts",
    "list_runs",
    "record_agent_text",
    "register_job",
    "registered_steps",
    "resumer",
    "run_detail",
    "run_identity",
    "run_item",
    "run_outcome",
    "spec_changes",
    "step",
]
