"""Throughput of the Ray executor with 1, 2 and 4 Lean actors against the local executor with
as many REPL workers, in the same run, on the fake REPL with a fixed per-check latency (no Lean:
the figures measure the executors, not Lean).

    python benchmarks/scale_ray.py --pg-url postgresql://postgres@127.0.0.1:5432/postgres \
        [--items 240] [--latency 0.2] [--actors 1 2 4] [--repeats 3]

Each configuration runs the same job (one Lean check per item: hygiene, the result cache, the
REPL pool, an attempt, the item's state) over the same `--items` items, in a fresh PostgreSQL
database. The fake REPL's check latency is a `time.sleep` (it costs no CPU, so on a small
machine the executors' own work, not the latency, is what competes for cores). Both executors'
REPLs are warmed and one untimed run of each goes first; every configuration is repeated
`--repeats` times, local and Ray in alternating order, and the median is reported. Prints a
Markdown table: items/s of each executor, Ray as a ratio of local, the speed-up from 1 actor,
and Ray's overhead per item (its extra wall time per item at zero check latency, one worker).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from math2.lean import CheckItem, LeanChecker, PoolConfig, ReplBackend
from math2.runs import ItemContext, Job, Resource, RunServices, execute, step
from math2.runs.ray_actors import NAMESPACE, WorkerEnv
from math2.runs.ray_exec import RayOptions, stop_actors
from math2.store import Store
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


class Databases:
    def __init__(self, admin: str):
        self.admin = make_url(admin).set(drivername="postgresql+psycopg")
        self.engine = create_engine(self.admin, isolation_level="AUTOCOMMIT")
        self.names: list[str] = []

    def new(self) -> Store:
        name = f"math2_bench_{uuid.uuid4().hex[:10]}"
        with self.engine.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        self.names.append(name)
        store = Store(self.admin.set(database=name).render_as_string(hide_password=False))
        store.upgrade()
        return store

    def drop(self) -> None:
        with self.engine.connect() as c:
            for n in self.names:
                c.execute(text(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)'))


def records(n: int) -> list[Item]:
    return [Item(id=f"x{k}") for k in range(n)]


async def run_local(store: Store, n: int, workers: int, latency: float) -> float:
    astore = AsyncStore(store)
    backend = ReplBackend.from_config(pool(workers, latency))
    # Warm the pool (every REPL loads the header) outside the timing, as the Ray actors are.
    await asyncio.gather(
        *(backend.run("import Mathlib", "example : True := trivial", 60) for _ in range(workers))
    )
    svc = services(WorkerEnv(astore=astore, lean_backend=backend, store=store))
    t0 = time.monotonic()
    try:
        s = await execute(
            astore,
            Job("bench.ray", "local", [check()]),
            records(n),
            resources={"lean": Resource("lean", workers)},
            services=svc,
        )
        assert s.done == n, s
        return time.monotonic() - t0
    finally:
        await backend.close()
        await astore.aclose()


async def run_ray(ray, store: Store, n: int, actors: int, latency: float, batch: int) -> float:
    stop_actors(ray)
    opts = RayOptions(batch_size=batch, lean=pool(1, latency), lean_actors_per_node=actors)
    # Warm the actors (their REPLs load the header) and the store's writer outside the timing.
    from math2.runs.ray_exec import ensure_lean_actors, ensure_writer

    for a in ensure_lean_actors(ray, opts).values():
        await a.run.remote("import Mathlib", "example : True := trivial", 60)
    await ensure_writer(ray, store).counts.remote()
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
    assert s.done == n, s
    return time.monotonic() - t0


async def pair(ray, dbs, a, k: int, latency: float, rep: int) -> tuple[float, float]:
    """One timed local run and one timed Ray run, in alternating order from one repeat to the
    next (so neither executor always runs on the quieter half of a shared machine)."""
    if rep % 2:
        tr = await run_ray(ray, dbs.new(), a.items, k, latency, a.batch)
        tl = await run_local(dbs.new(), a.items, k, latency)
    else:
        tl = await run_local(dbs.new(), a.items, k, latency)
        tr = await run_ray(ray, dbs.new(), a.items, k, latency, a.batch)
    print(
        f"  repeat {rep + 1}, k={k}, latency {latency * 1000:.0f} ms: local {tl:.2f} s, "
        f"Ray {tr:.2f} s",
        flush=True,
    )
    return tl, tr


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pg-url", default=os.environ.get("MATH2_TEST_PG_URL"))
    p.add_argument("--items", type=int, default=240)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--batch", type=int, default=RayOptions.batch_size)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cpus", type=int, default=2)
    a = p.parse_args()
    if not a.pg_url:
        p.error("give --pg-url (or MATH2_TEST_PG_URL): the Ray executor needs PostgreSQL")
    import ray

    root = Path(__file__).resolve().parents[1]
    ray.init(
        num_cpus=a.cpus,
        namespace=NAMESPACE,
        include_dashboard=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PYTHONPATH": str(root / "src")}},
    )
    dbs = Databases(a.pg_url)
    rows = []
    try:
        # Warm-up, untimed: start Ray's worker processes (they import math2 once, then serve
        # every batch), as the local executor's process has.
        await run_ray(ray, dbs.new(), 4 * a.batch, 1, 0.0, a.batch)
        await run_local(dbs.new(), 4 * a.batch, 1, 0.0)
        # Ray's overhead per item: both executors at zero check latency, one worker.
        zero = [await pair(ray, dbs, a, 1, 0.0, r) for r in range(a.repeats)]
        zl = statistics.median(t for t, _ in zero)
        zr = statistics.median(t for _, t in zero)
        for k in a.actors:
            times = [await pair(ray, dbs, a, k, a.latency, r) for r in range(a.repeats)]
            tl = statistics.median(t for t, _ in times)
            tr = statistics.median(t for _, t in times)
            rows.append((k, a.items / tl, a.items / tr, a.items / max(t for _, t in times)))
            print(f"actors={k}: local {a.items / tl:.1f}/s ray {a.items / tr:.1f}/s", flush=True)
    finally:
        stop_actors(
            ray, [f"{dbs.admin.set(database=n).render_as_string(False)}" for n in dbs.names]
        )
        ray.shutdown()
        dbs.drop()
    base = rows[0][2]
    print(
        f"\n{a.items} items, check latency {a.latency * 1000:.0f} ms (sleep), batches of "
        f"{a.batch}, median of {a.repeats} repeats\n"
    )
    print(
        "| Lean actors (= local REPL workers) | local items/s | Ray items/s | Ray / local "
        "| Ray speed-up vs 1 actor | ideal items/s | Ray's slowest repeat |"
    )
    print("|---|---|---|---|---|---|---|")
    for k, lt, rt, worst in rows:
        print(
            f"| {k} | {lt:.1f} | {rt:.1f} | {rt / lt:.2f} | {rt / base:.2f}× "
            f"| {k / a.latency:.1f} | {worst:.1f} |"
        )
    print(
        f"\nZero latency, 1 worker (median of {a.repeats}): local {zl / a.items * 1000:.1f} "
        f"ms/item, Ray {zr / a.items * 1000:.1f} ms/item; Ray's overhead "
        f"{(zr - zl) / a.items * 1000:.1f} ms/item"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        asyncio.run(main())
