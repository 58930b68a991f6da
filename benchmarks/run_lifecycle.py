"""What a run's lifecycle costs on the local executor: the fixed cost of driving a run once
(open it, claim its lease, begin and end a segment, give the lease up) and the engine's CPU per
item of a step that only records an attempt, on a SQLite store (and PostgreSQL with --pg).

    python benchmarks/run_lifecycle.py [--items 2000] [--repeats 3] [--empty-runs 20] [--pg URL]

CPU time is the process's own (user + sys, every thread: the writer's and the lease's too), the
load average of the machine is printed beside every figure. Run it against another checkout of
math2 (PYTHONPATH=that/src) to compare two versions of the engine on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from math2.runs import ItemContext, Job, execute, step
from math2.store import Store


class Rec(BaseModel):
    id: str


@step("bench.lifecycle.noop")
def noop():
    async def run(rec: Rec, ctx: ItemContext) -> Rec:  # type: ignore[type-arg]
        await ctx.attempt(stage="noop", verdict="ok")
        return rec

    return run


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def measure(store: Store, items: int, key: str) -> tuple[float, float]:
    """(wall s, CPU s) of one run of `items` no-op items."""
    records = [Rec(id=f"r{k:06d}") for k in range(items)]
    t0, c0 = time.monotonic(), cpu_s()
    summary = asyncio.run(execute(store, Job("bench.lifecycle", key, [noop()]), records))
    assert summary.done == items, summary
    return time.monotonic() - t0, cpu_s() - c0


def pg_store(admin: str) -> Store:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    url = make_url(admin).set(drivername="postgresql+psycopg")
    name = f"math2_bench_{uuid.uuid4().hex[:10]}"
    with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    store = Store(url.set(database=name).render_as_string(hide_password=False))
    store.upgrade()
    return store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--empty-runs", type=int, default=20)
    ap.add_argument("--pg", help="a PostgreSQL admin URL: measure there too")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stores = {"sqlite": lambda i: Store(f"sqlite:///{Path(tmp) / f'b{i}.db'}")}
        if args.pg:
            stores["postgresql"] = lambda i: pg_store(args.pg)
        for kind, make in stores.items():
            for i in range(args.repeats):
                store = make(i)
                store.upgrade()
                wall, cpu = measure(store, args.items, f"items-{i}")
                print(
                    f"{kind} run {i + 1}: {args.items} items in {wall:.2f} s wall, "
                    f"{cpu:.2f} s CPU: {1000 * cpu / args.items:.3f} ms CPU/item, "
                    f"{args.items / wall:.0f} items/s; {load()}"
                )
                walls, cpus = [], []
                for k in range(args.empty_runs):  # a run driven once, nothing in it
                    w, c = measure(store, 0, f"empty-{i}-{k}")
                    walls.append(w)
                    cpus.append(c)
                median = sorted(walls)[len(walls) // 2]
                print(
                    f"{kind} run {i + 1}: driving an empty run: median {1000 * median:.1f} ms "
                    f"wall, {1000 * sum(cpus) / len(cpus):.1f} ms CPU (mean of {args.empty_runs}); "
                    f"{load()}"
                )
                store.close()


if __name__ == "__main__":
    main()
