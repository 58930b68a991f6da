"""The Ray executor against the local one in the same run, on the fake REPL (no Lean: the
figures measure the executors, not Lean): CPU per item of every process each executor uses, and
throughput with 1, 2 and 4 Lean pools (`lean_actors_per_node`) against as many local REPL
workers.

    python benchmarks/scale_ray.py --pg-url postgresql://postgres@127.0.0.1:5432/postgres \
        [--job check|formalize] [--items 160] [--latency 0.2] [--actors 1 2 4] [--repeats 3] \
        [--cpus 2] [--model-latency 0.05] [--concurrency 8]

Every run is the same job over the same items — `--job check`: one Lean check per item
(hygiene, the result cache, the REPL pool, an attempt, the item's state); `--job formalize`: the
formalize role's items as `math2 formalize` runs them (`run_formalize`, on either executor: a
generation and a judgement through the fake model server, whose CPU is counted apart as outside
the run, and a check through the fake REPL; every item passes in round 1) — in a fresh
PostgreSQL database, each executor starting what it uses (the local REPL pool; Ray's hub — the
run's writer — and item workers with their Lean pools and REPLs; main before issue 44's second
branch: Lean actors), as a command does. Local and Ray alternate in order from one repeat to the
next; medians.

1. **CPU per item** (zero check latency, one worker): user + sys of every process, read with
   psutil every 0.2 s while the run goes (the meter's own thread taken out) — the driver (this
   process), the run's item workers, its hub (writer and limiters), Lean actors (older code),
   the REPLs,
   Ray's own processes (raylet, GCS, …) and PostgreSQL's —, for runs of N and 3N items: the CPU
   per item is what the 2N more items cost ((CPU(3N) − CPU(N)) / 2N), the fixed cost what
   remains of a run of N. CPU seconds are what holds on a loaded machine, where wall time does
   not. A local run counts its own process, its REPLs and PostgreSQL (Ray's idle processes are
   left out).
2. **Throughput** (check latency `--latency`, a `time.sleep` in the fake REPL: it costs no CPU)
   at k REPLs — one Lean pool of k (`--shape repls`, what docs/scale.md recommends) or k pools
   of one REPL each (`--shape actors`: `lean_actors_per_node` = k) — against a local pool of k
   REPLs: items/s over the whole run, and in its steady part (from the 10th to the 90th
   percentile of the items' finish times, which leaves out each executor's start and its last
   batch).

The 1-minute load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import formalize_setup as setup
from pydantic import BaseModel
from ray_meter import CpuMeter, Databases, Run, steady_rate
from ray_report import print_report
from sqlalchemy import select
from sqlalchemy.engine import make_url

from math2.lean import CheckItem, LeanChecker, PoolConfig, ReplBackend
from math2.llm.testing import spawn_fake_server
from math2.roles.formalize import run_formalize
from math2.runs import ItemContext, Job, Resource, RunServices, execute, step
from math2.runs.ray_actors import NAMESPACE, WorkerEnv
from math2.runs.ray_exec import RayOptions
from math2.store import Run as RunRow
from math2.store.aio import AsyncStore


class Item(BaseModel):
    id: str
    verdict: str | None = None


@step("bench.ray.check")
def check():
    async def run(rec: Item, ctx: ItemContext) -> Item:
        code = f"import Mathlib\n\ntheorem {rec.id} : {rec.id[1:]} + 0 = {rec.id[1:]} := by sorry"
        result, _ = await ctx.lean(ctx.services.checker, CheckItem(id=rec.id, code=code))
        return rec.model_copy(update={"verdict": result.status.value})

    return run


@dataclass
class CheckServices(RunServices):
    checker: LeanChecker


def services(env: WorkerEnv) -> CheckServices:
    return CheckServices(LeanChecker(env.lean_backend, cache=env.result_cache()))


def pool(size: int, latency: float) -> PoolConfig:
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--check-delay", str(latency)]
    return PoolConfig(argv=argv, size=size, timeout_s=60, memory_limit_mb=None)


def records(n: int) -> list[Item]:
    return [Item(id=f"x{k}") for k in range(n)]


# Role-shaped items (`--job formalize`): the formalize role as `math2 formalize` runs it — a
# generation and a judgement through the fake model server, one check through the fake REPL,
# every attempt, reply and result stored — each item passing in round 1 (retrieval off); the
# setup is `formalize_setup`'s (`FakeSetup`), as `formalize_throughput.py`'s.


async def run_formalize_bench(
    dbs: Databases,
    meter: CpuMeter,
    f: setup.FakeSetup,
    n: int,
    workers: int,
    latency: float,
    ray: RayOptions | None,
) -> Run:
    store = dbs.new()
    setup.add_fake_model(store)
    inp = f.items(n)
    st = f.settings(store.url, workers, latency)
    opts = setup.options()
    load = os.getloadavg()[0]
    with meter:
        t0 = time.monotonic()
        s = await run_formalize(st, store, inp, opts, ray=ray)
        wall = time.monotonic() - t0
    assert s.done == n and s.failed == 0, s
    out = Run("ray" if ray else "local", n, wall, steady_rate(store, n), meter.cpu, load)
    if ray is not None:
        with store.session() as ses:
            stats = ses.scalars(select(RunRow.stats).where(RunRow.id == s.run_id)).one()
        w = stats["writer"]
        out.writes, out.commits, out.calls = w["writes"], w["commits"], w["calls"]
    return out


async def run_local(dbs: Databases, meter: CpuMeter, n: int, workers: int, latency: float) -> Run:
    store = dbs.new()
    load = os.getloadavg()[0]
    with meter:
        t0 = time.monotonic()
        astore = AsyncStore(store)
        backend = ReplBackend.from_config(pool(workers, latency))
        svc = services(WorkerEnv(astore=astore, lean_backend=backend, store=store))
        try:
            s = await execute(
                astore,
                Job("bench.ray", "local", [check()]),
                records(n),
                resources={"lean": Resource("lean", workers)},
                services=svc,
            )
        finally:
            await backend.close()
            await astore.aclose()
        wall = time.monotonic() - t0
    assert s.done == n, s
    return Run("local", n, wall, steady_rate(store, n), meter.cpu, load)


async def run_ray(
    dbs: Databases,
    meter: CpuMeter,
    n: int,
    actors: int,
    latency: float,
    batch: int,
    shape: str = "repls",
) -> Run:
    store = dbs.new()
    if shape == "repls":  # one actor, a pool of `actors` REPLs
        opts = RayOptions(batch_size=batch, lean=pool(actors, latency))
    else:
        opts = RayOptions(batch_size=batch, lean=pool(1, latency), lean_actors_per_node=actors)
    load = os.getloadavg()[0]
    with meter:
        t0 = time.monotonic()
        s = await execute(
            store,
            Job("bench.ray", "ray", [check()]),
            records(n),
            executor="ray",
            ray=opts,
            services_factory=services,
            resources={"lean": Resource("lean", actors)},
        )
        wall = time.monotonic() - t0
    assert s.done == n, s
    with store.session() as ses:
        writer = ses.scalars(select(RunRow.stats).where(RunRow.id == s.run_id)).one()["writer"]
    out = Run("ray", n, wall, steady_rate(store, n), meter.cpu, load)
    out.writes, out.commits, out.calls = writer["writes"], writer["commits"], writer["calls"]
    return out


async def pair(dbs, meter, a, n: int, k: int, latency: float, rep: int) -> tuple[Run, Run]:
    """A local run and a Ray run, in alternating order from one repeat to the next (so neither
    always runs on the quieter half of a shared machine)."""
    if a.formalize is not None:
        # `--shape actors`: k Lean pools of one REPL each on Ray (the local run has k REPLs)
        pools = k if a.shape == "actors" else 1
        opts = RayOptions(batch_size=a.batch, lean_actors_per_node=pools)
        go_local = run_formalize_bench(dbs, meter, a.formalize, n, k, latency, None)
        go_ray = run_formalize_bench(dbs, meter, a.formalize, n, k // pools, latency, opts)
    else:
        go_local = run_local(dbs, meter, n, k, latency)
        go_ray = run_ray(dbs, meter, n, k, latency, a.batch, a.shape)
    if rep % 2:
        r = await go_ray
        lo = await go_local
    else:
        lo = await go_local
        r = await go_ray
    for x in (lo, r):
        print(
            f"  repeat {rep + 1}, {x.kind}, {n} items, k={k}, latency {latency * 1000:.0f} ms: "
            f"{x.wall:.2f} s, {n / x.wall:.1f} items/s (steady {x.steady:.1f}), CPU "
            f"{x.total():.2f} s, load {x.load:.1f}"
            + (
                f", {x.writes} writes in {x.commits} commits, {x.calls} calls"
                if x.kind == "ray"
                else ""
            ),
            flush=True,
        )
    return lo, r


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pg-url", default=os.environ.get("MATH2_TEST_PG_URL"))
    p.add_argument("--items", type=int, default=160, help="N: the CPU runs have N and 3N items")
    p.add_argument("--throughput-items", type=int, default=240)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--batch", type=int, default=RayOptions().batch_size)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--skip-throughput", action="store_true")
    p.add_argument("--skip-cpu", action="store_true", help="the throughput part only")
    p.add_argument(
        "--shape",
        choices=("repls", "actors"),
        default="repls",
        help="k REPLs as one Lean actor's pool (repls) or as k actors of one REPL (actors)",
    )
    p.add_argument(
        "--job",
        choices=("check", "formalize"),
        default="check",
        help="one check an item (check) or the formalize role's items: a generation and a "
        "judgement through the fake model server, a check through the fake REPL (formalize)",
    )
    p.add_argument(
        "--first-repeat",
        type=int,
        default=0,
        help="number the repeats from here (which executor goes first alternates with it)",
    )
    p.add_argument("--model-latency", type=float, default=0.05, help="formalize: s a call")
    p.add_argument("--concurrency", type=int, default=8, help="formalize: the model's slots")
    a = p.parse_args()
    if not a.pg_url:
        p.error("give --pg-url (or MATH2_TEST_PG_URL): the Ray executor needs PostgreSQL")
    import ray

    root = Path(__file__).resolve().parents[1]
    paths = ("src", "benchmarks")  # the workers import math2 and this module's job
    ray.init(
        num_cpus=a.cpus,
        namespace=NAMESPACE,
        include_dashboard=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(str(root / d) for d in paths)}},
    )
    dbs = Databases(a.pg_url)
    meter = CpuMeter(make_url(a.pg_url).port)
    n = a.items
    cpu_runs: dict[tuple[str, int], list[Run]] = {}
    rows = []
    stack = contextlib.ExitStack()
    a.formalize = None
    if a.job == "formalize":
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        srv = stack.enter_context(spawn_fake_server(setup.model_script(a.model_latency), folder))
        a.formalize = setup.FakeSetup(srv.base_url, a.concurrency, folder)
    try:
        # Warm-up, untimed: Ray's worker processes start and import math2 once.
        await pair(dbs, meter, a, 2 * a.batch, 1, 0.0, 0)
        for rep in range(a.first_repeat, a.first_repeat + (0 if a.skip_cpu else a.repeats)):
            for size in (n, 3 * n):
                lo, r = await pair(dbs, meter, a, size, 1, 0.0, rep)
                cpu_runs.setdefault(("local", size), []).append(lo)
                cpu_runs.setdefault(("ray", size), []).append(r)
        if not a.skip_throughput:
            for k in a.actors:
                runs = [
                    await pair(dbs, meter, a, a.throughput_items, k, a.latency, rep)
                    for rep in range(a.repeats)
                ]
                rows.append((k, runs))
    finally:
        ray.shutdown()
        dbs.drop()
        stack.close()

    print_report(a, cpu_runs, rows)


if __name__ == "__main__":
    asyncio.run(main())
