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

A run is identified by job + input key + spec hash (the steps' names and arguments): two models
or two settings are two runs side by side; the same job over the same input resumes its run.
Every model call goes through `ItemContext.chat/structured` and every Lean check through
`ItemContext.lean`: each is an attempt row, and each is answered from the LLM response cache or
the Lean result cache when it was made before, so a killed run repeats nothing it finished.
"""

from math2.runs.context import ItemContext
from math2.runs.engine import Progress, ResourceState, RunSummary, execute, open_run
from math2.runs.outcome import Reason, RunOutcome, run_outcome
from math2.runs.outputs import record_agent_text
from math2.runs.queries import (
    AttemptRow,
    RunDetail,
    RunRow,
    item_attempts,
    list_runs,
    run_detail,
)
from math2.runs.registry import CannotResume, register_job, resumer
from math2.runs.spec import Job, Record, Step, StepSpec, registered_steps, step
from math2.util.limits import Resource

__all__ = [
    "AttemptRow",
    "CannotResume",
    "ItemContext",
    "Job",
    "Progress",
    "Reason",
    "Record",
    "Resource",
    "ResourceState",
    "RunDetail",
    "RunOutcome",
    "RunRow",
    "RunSummary",
    "Step",
    "StepSpec",
    "execute",
    "item_attempts",
    "list_runs",
    "open_run",
    "record_agent_text",
    "register_job",
    "registered_steps",
    "resumer",
    "run_detail",
    "run_outcome",
    "step",
]
