"""A small job for the executor tests: one model call and one Lean check per item, through the
same `ItemContext` paths every role uses (the fake model server and the fake REPL behind them),
and its resumer (`math2 runs resume` of a run of it, on the executor it names)."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select

from math2.lean import CheckItem, LeanChecker, PoolConfig
from math2.llm import Endpoint, LLMClient, StoreCache, load_template_file
from math2.llm.testing import Rule, Script
from math2.llm.testing.fake_server import request_hash
from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Provenance,
    Resource,
    Resume,
    RunServices,
    RunSummary,
    execute,
    register_job,
    step,
)
from math2.runs.ray_actors import WorkerEnv
from math2.store import LLMResponse, Run, Store


class Item(BaseModel):
    id: str
    text: str
    answer: str | None = None
    verdict: str | None = None


@step("test.ray.prove")
def prove(template_path: str, header: str = "import Mathlib"):
    async def run(rec: Item, ctx: ItemContext) -> Item:
        t = load_template_file(Path(template_path))
        async with ctx.slot("model"):
            resp, _ = await ctx.chat(
                ctx.services.client, t, {"statement": rec.text}, stage="generate"
            )
        code = f"{header}\n\ntheorem {rec.id} : {resp.content} := by sorry"
        result, _ = await ctx.lean(
            ctx.services.checker, CheckItem(id=rec.id, code=code), stage="compile"
        )
        return rec.model_copy(update={"answer": resp.content, "verdict": result.status.value})

    return run


def job(template_path: str, key: str = "ray-test-input") -> Job:
    return Job("test.ray", key, [prove(template_path=template_path)])


def items(n: int) -> list[Item]:
    return [Item(id=f"t{k}", text=f"statement {k}") for k in range(n)]


def script(latency_s: float = 0.0) -> Script:
    return Script(
        rules=[Rule(user=r"statement (\d+)", reply=r"\1 + 0 = \1", expand=True)],
        latency_s=latency_s,
    )


def stored_requests(store: Store) -> set[str]:
    """Every stored model call's request, hashed as `received`
    (math2.llm.testing.fake_server) hashes a received one."""
    with store.session() as s:
        return {request_hash(r.request) for r in s.scalars(select(LLMResponse))}


def write_template(folder: Path) -> str:
    p = folder / "prove.toml"
    p.write_text('id = "test/prove"\nversion = 1\nuser = "Formalize {{ statement }}"\n')
    return str(p)


def pool_config(
    repl_log: Path,
    size: int = 2,
    check_delay: float = 0.0,
    module: str = "math2.lean.testing.fake_repl",
) -> PoolConfig:
    argv = [sys.executable, "-m", module, "--log", str(repl_log)]
    argv += ["--check-delay", str(check_delay)]
    return PoolConfig(argv=argv, size=size, timeout_s=30, memory_limit_mb=None)


@dataclass
class JobServices(RunServices):
    """The test job's services: the model's client and the checker; the run's identity names
    the checker's Lean and the model (as a role's services do)."""

    client: LLMClient
    checker: LeanChecker

    async def provenance(self) -> Provenance:
        return Provenance(lean=await self.checker.ensure_identity(), models={"fake-model": ""})

    async def aclose(self) -> None:
        await self.client.aclose()


def services(base_url: str, env: WorkerEnv, concurrency: int = 4) -> JobServices:
    """The steps' services, built where they run (a Ray worker or the local driver)."""
    client = LLMClient(
        Endpoint(base_url=base_url, model="fake-model", concurrency=concurrency),
        StoreCache(env.astore),
    )
    return JobServices(client, LeanChecker(env.lean_backend, cache=env.result_cache()))


def resources() -> dict[str, Resource]:
    return {"model": Resource("model", 4), "lean": Resource("lean", 2)}


def params(base_url: str, repl_log: str, template: str, n: int) -> dict[str, Any]:
    """What a run of the job records for its resumer."""
    return {"base_url": base_url, "repl_log": repl_log, "template": template, "n": n}


async def _resume(run: Run, settings: Any, store: Store, resume: Resume) -> RunSummary:
    p = run.params
    if resume.ray is None:
        raise CannotResume("the test job resumes on Ray only")
    options = resume.ray.model_copy(update={"lean": pool_config(Path(p["repl_log"]))})
    return await execute(
        store,
        job(p["template"]),
        items(p["n"]),
        executor="ray",
        ray=options,
        services_factory=functools.partial(services, p["base_url"]),
        resources=resources(),
        params=p,
        on_progress=resume.on_progress,
        resume=resume,
    )


register_job("test.ray", _resume)


class Idle:
    """An actor that does nothing (it stands for one a run left behind, in the actors tests)."""

    def ping(self) -> int:
        return 1
