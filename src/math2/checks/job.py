"""`run_checks`: a battery over a JSONL file of pairs, on the run engine (streaming, resumable).

Every model the battery names must be in the register (X08) before anything runs. Each pair's
outcomes are written to `check_results` (pair key, check, checker, verdict, score, evidence,
run, attempt); model calls are attempts of the run and answered from the LLM cache on resume.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from math2.checks.base import CheckEnv, Outcome, Pair
from math2.checks.battery import Battery, BatteryConfig, overall, record_outcomes
from math2.checks.calibration import Calibration, calibrate, labelled_verdicts
from math2.checks.pairs import read_pairs
from math2.config import Settings
from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Progress,
    Resume,
    RunSummary,
    register_job,
    step,
)
from math2.services import RoleServices, ServiceSpec, execute_role, resolve_spec
from math2.store import Run, Store
from math2.store.work import Verdict
from math2.util.files import file_digest
from math2.util.limits import Resource

__all__ = ["CheckedPair", "battery_step", "calibrate_pairs", "run_checks"]

if TYPE_CHECKING:
    from math2.runs.ray_exec import RayOptions

JOB = "check"


class CheckedPair(BaseModel):
    """A pair's outcomes and the overall verdict."""

    id: str
    verdict: Verdict
    outcomes: list[Outcome] = Field(default_factory=list)

    @property
    def outcome(self) -> str:
        """How the pair ended, for the run's progress: its overall verdict (pass, fail, error,
        skip), so a pair no check could decide counts as an error."""
        return self.verdict.value


@step("checks.battery")
def battery_step(config: dict[str, Any]):
    """Run the configured battery on a pair and store its outcomes (the config is the spec)."""
    battery = Battery.from_config(BatteryConfig.model_validate(config))

    async def run(pair: Pair, ctx: ItemContext[RoleServices]) -> CheckedPair:
        outcomes = await battery.run(pair, CheckEnv(ctx=ctx))
        agent_text_id, run_id = pair.meta.get("agent_text_id"), ctx.run_id  # plain values
        await ctx.astore.write(
            lambda s: record_outcomes(s, pair, outcomes, run_id=run_id, agent_text_id=agent_text_id)
        )
        return CheckedPair(id=pair.id, verdict=overall(outcomes), outcomes=outcomes)

    return run


async def run_checks(
    settings: Settings,
    store: Store,
    input_path: Path,
    config: BatteryConfig,
    *,
    limit: int | None = None,
    lean_backend: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    ray: RayOptions | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Check every pair of a JSONL file (or resume that run); on a Ray cluster when `ray` (a
    `RayOptions`) is given."""
    input_path = Path(input_path)
    total = sum(1 for _ in read_pairs(input_path, limit))  # validate the whole file first
    battery = Battery.from_config(config)
    spec = resolve_spec(
        settings,
        store,
        ServiceSpec(
            models=tuple(sorted(battery.models)),
            lean=battery.needs_lean,
            lean_backend=lean_backend,
        ),
    )

    def resources(limiter) -> dict[str, Resource]:
        out = {f"model:{m}": limiter(m) for m in spec.all_models}
        if battery.needs_lean:
            out["lean"] = Resource("lean", max(1, settings.lean.workers))
        return out

    job = Job(JOB, file_digest(input_path), [battery_step(config.model_dump(mode="json"))])
    params = {
        "input": str(input_path.resolve()),
        "config": config.model_dump(mode="json"),
        "limit": limit,
        "lean_backend": lean_backend,
    }
    return await execute_role(
        settings,
        store,
        spec,
        job,
        read_pairs(input_path, limit),
        resources=resources,
        ray=ray,
        params=params,
        total=total,
        on_progress=on_progress,
        on_result=on_result,
        resume=resume,
    )


def calibrate_pairs(
    store: Store, input_path: Path, *, limit: int | None = None, run_id: int | None = None
) -> Calibration:
    """The stored verdicts on a labelled pairs file against its labels (`faithful`,
    `error_types`); stored in the check run's params (`calibration`) when `run_id` is given."""
    from math2.errors import InputError
    from math2.store.work import Run

    labels: dict[str, tuple[bool, list[str]]] = {}
    for pair in read_pairs(input_path, limit):
        if "faithful" not in pair.meta:
            where = pair.meta.get("source", pair.id)
            raise InputError(input_path, None, f"{where}: no 'faithful' label (true or false)")
        labels[pair.key] = (pair.meta["faithful"], list(pair.meta.get("error_types") or []))
    with store.session() as s:
        rows = labelled_verdicts(s, labels)
        cal = calibrate(rows)
        if run_id is not None and (run := s.get(Run, run_id)) is not None:
            run.params = {**(run.params or {}), "calibration": cal.model_dump(mode="json")}
            s.commit()
    return cal


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    params = run.params or {}
    path = Path(params.get("input", ""))
    if not path.exists():
        raise CannotResume(f"run {run.id}: its input {path} is gone")
    if file_digest(path) != run.key:
        raise CannotResume(f"run {run.id}: its input {path} has changed since the run started")
    config = BatteryConfig.model_validate(params.get("config", {}))
    return await run_checks(
        settings,
        store,
        path,
        config,
        limit=params.get("limit"),
        lean_backend=params.get("lean_backend"),
        on_progress=resume.on_progress,
        ray=resume.ray,
        resume=resume,
    )


register_job(JOB, _resume)
