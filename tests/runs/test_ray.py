"""The Ray executor against the local one, on a Ray cluster the tests start themselves, with the
fake model server and the fake REPL: the same run items and attempts; a changed REPL command
reaching the REPL in the next run; no actor of a run outliving it; the Lean limit over a
worker's pools; the hub hosting its node's item worker (the faults — a worker, the driver, the
hub lost — are `test_ray_faults.py`'s).

Normalised before comparing (and nothing else): database ids (`id`, `run_id`), times
(`finished_at`, `started_at`, `duration_s`, and the `latency_s` / `time_s` / `queue_s` fields
inside the stored replies and Lean results).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.lean import ReplBackend
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import read_log, repeats
from math2.runs import Resource, execute
from math2.runs.ray_actors import NAMESPACE, WorkerEnv
from math2.runs.ray_exec import RayOptions, RayUnavailable
from math2.store import Run, Store
from math2.store.aio import AsyncStore
from tests.runs import ray_job
from tests.runs.ray_cluster import (  # noqa: F401 (fixtures)
    N,
    _checks,
    _ray_run,
    _resources,
    _rows,
    _title,
    cluster,
    lean_actors,
    math2_actors,
    pg,
)

pytestmark = [pytest.mark.ray, pytest.mark.postgres]


async def _local(store: Store, base_url: str, template: str, repl_log: Path):
    astore = AsyncStore(store)
    backend = ReplBackend.from_config(ray_job.pool_config(repl_log))
    env = WorkerEnv(astore=astore, lean_backend=backend, store=store)
    services = ray_job.services(base_url, env)
    try:
        return await execute(
            astore,
            ray_job.job(template),
            ray_job.items(N),
            resources=_resources(),
            services=services,
        )
    finally:
        await services.aclose()
        await backend.close()
        await astore.aclose()


async def test_same_items_and_attempts_as_local(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    template = ray_job.write_template(tmp_path)
    local_db, ray_db = pg(), pg()
    with (
        FakeServer(ray_job.script(), log_path=tmp_path / "local.jsonl") as s1,
        FakeServer(ray_job.script(), log_path=tmp_path / "ray.jsonl") as s2,
    ):
        local = await _local(local_db, s1.base_url, template, tmp_path / "repl-local.jsonl")
        remote = await _ray_run(ray_db, s2.base_url, template, tmp_path / "repl-ray.jsonl")
    assert (local.done, local.failed) == (N, 0)
    assert (remote.done, remote.failed) == (N, 0)
    local_items, local_attempts = _rows(local_db)
    ray_items, ray_attempts = _rows(ray_db)
    assert len(local_items) == N and len(local_attempts) == 2 * N
    assert ray_items == local_items
    assert ray_attempts == local_attempts
    # Each model call and each check was made once, on both executors.
    for log in ("local.jsonl", "ray.jsonl"):
        entries = read_log(tmp_path / log)
        assert len(entries) == N and repeats(entries) == {}
    assert _checks(tmp_path / "repl-ray.jsonl") == Counter({f"t{k}": 1 for k in range(N)})
    with ray_db.session() as s:
        run = s.scalars(select(Run)).one()
        assert run.stats["executor"] == "ray" and len(run.stats["nodes"]) == 1
        writer = run.stats["writer"]
        assert writer["writes"] >= 4 * N  # item states and attempts, one writer
        # in batches: each call of a worker carries every write it queued, in one commit
        assert writer["commits"] <= writer["calls"] < writer["writes"]
        node = run.stats["nodes"][0]
    r = CliRunner().invoke(app, ["--db", ray_db.url, "runs", "show", str(remote.run_id)])
    assert r.exit_code == 0 and f"executor: ray on 1 node(s): {node}" in r.output
    assert f"items per node: {node} {N}" in r.output  # its one segment


def test_cli_refuses_ray_on_sqlite(cluster, tmp_path):  # noqa: F811
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "statement": "x"}\n')
    db = f"sqlite:///{tmp_path / 'm.db'}"
    argv = ["--db", db, "formalize", str(inp), "--model", "g", "--judge", "j", "--executor", "ray"]
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2, r.output
    assert "needs a PostgreSQL store" in r.output and "Traceback" not in r.output
    assert "give --db postgresql" in " ".join(r.output.split())


async def test_sqlite_is_refused(cluster, sqlite_store, tmp_path):  # noqa: F811
    with pytest.raises(RayUnavailable, match="needs a PostgreSQL store"):
        await _ray_run(sqlite_store, "http://127.0.0.1:9/v1", "x", tmp_path / "r.jsonl")


async def test_a_changed_repl_command_reaches_the_repl(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    """Each run's Lean pools are made from its own `[lean]` settings and end with it: a second
    run with another REPL command (here: another log file) checks on REPLs started with that
    command, never on the first run's."""
    template = ray_job.write_template(tmp_path)
    store = pg()
    first_log, second_log = tmp_path / "repl-first.jsonl", tmp_path / "repl-second.jsonl"
    with FakeServer(ray_job.script()) as srv:
        first = await _ray_run(store, srv.base_url, template, first_log, n=4)
        before = _checks(first_log)
        second = await execute(
            store,
            ray_job.job(template, key="another input"),
            ray_job.items(8)[4:],  # other theorems: not answered by the Lean result cache
            executor="ray",
            ray=RayOptions(batch_size=3, lean=ray_job.pool_config(second_log)),
            services_factory=functools.partial(ray_job.services, srv.base_url),
            resources=_resources(),
        )
    assert (first.done, second.done) == (4, 4) and first.run_id != second.run_id
    assert before == Counter({f"t{k}": 1 for k in range(4)})
    assert _checks(first_log) == before  # the first run's REPLs got nothing more
    assert _checks(second_log) == Counter({f"t{k}": 1 for k in range(4, 8)})


def test_runs_actors_list_and_stop_what_no_run_owns(cluster, lean_actors, tmp_path):  # noqa: F811
    """`math2 runs actors stop` stops the actors no live run owns (an older math2's detached
    writer and Lean actor here) and leaves a live run's hub and Lean actor; `--all` stops them
    too."""
    old = ["math2-writer-0123456789abcdef", "math2-lean-" + "ab" * 28]
    live = ["math2-hub-0123456789ab", "math2-lean-0123456789ab-" + "cd" * 28 + "-0"]
    idle = cluster.remote(ray_job.Idle)
    handles = [
        idle.options(name=n, namespace=NAMESPACE, lifetime="detached", num_cpus=0).remote()
        for n in old + live
    ]
    cluster.get([h.ping.remote() for h in handles])
    runner = CliRunner()
    db = ["--db", f"sqlite:///{tmp_path / 'unused.db'}"]
    listed = runner.invoke(app, [*db, "runs", "actors", "list"])
    assert listed.exit_code == 0, listed.output
    assert "4 actors, 2 left over" in listed.output
    assert all(f"{n}  left over" in listed.output for n in old)
    stopped = runner.invoke(app, [*db, "runs", "actors", "stop"])
    assert stopped.exit_code == 0 and "2 actors stopped" in stopped.output, stopped.output
    assert math2_actors(cluster) == sorted(live)
    stopped = runner.invoke(app, [*db, "runs", "actors", "stop", "--all"])
    assert stopped.exit_code == 0 and "2 actors stopped" in stopped.output, stopped.output
    assert math2_actors(cluster) == []


async def test_k_pools_of_one_repl_check_k_items_at_once(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    """A run whose `lean` limit is its `[lean] workers` (1, as the roles set it) on a worker
    owning two pools of one REPL: the worker's items check at least two at a time, as a local
    pool of two REPLs does (the limit is twice the worker's REPLs, shared by all its batches),
    not one, and never more than that limit, however many batches are in flight (review of
    ray44c M2: with one batch, a limit per batch passed too)."""
    n = 6
    template = ray_job.write_template(tmp_path)
    store = pg()
    with FakeServer(ray_job.script(), log_path=tmp_path / "llm.jsonl") as srv:
        summary = await execute(
            store,
            ray_job.job(template),
            ray_job.items(n),
            executor="ray",
            ray=RayOptions(
                batch_size=2,  # three batches: a per-batch limit would allow 6 at once
                lean=ray_job.pool_config(tmp_path / "repl.jsonl", size=1, check_delay=0.3),
                lean_actors_per_node=2,
            ),
            services_factory=functools.partial(ray_job.services, srv.base_url),
            resources={"model": Resource("model", 4), "lean": Resource("lean", 1)},
        )
    assert (summary.done, summary.failed) == (n, 0)
    with store.session() as s:
        workers = s.scalars(select(Run)).one().stats["workers"]
    assert 2 <= workers["most_checks"] <= 4


def _math2_actors() -> set[tuple[int, str]]:
    """(pid, title) of the processes below this one that Ray titled as one of math2's actors
    (`ray::HubWorker`, `ray::ItemWorker`, …)."""
    import psutil

    out = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if (t := _title(p).split(" ")[0]).endswith("Worker"):
                out.add((p.pid, t))
    return out


async def test_the_hub_hosts_the_drivers_nodes_item_worker(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    """On the driver's node the run's hub is also its item worker: one Ray process for both
    (one process and one import of math2 fewer a run), which runs the items and writes them.
    A process counts by the title it takes during the run, whenever it started: Ray may give
    an actor a worker process it started earlier (an idle one, titled `ray::IDLE`)."""
    n = 12
    before = _math2_actors()  # an earlier test's actor not yet gone is not this run's
    template = ray_job.write_template(tmp_path)
    store = pg()
    titles: set[str] = set()
    with FakeServer(ray_job.script(), log_path=tmp_path / "llm.jsonl") as srv:
        run = asyncio.create_task(
            _ray_run(store, srv.base_url, template, tmp_path / "repl.jsonl", n=n, check_delay=0.1)
        )
        while not run.done():
            titles |= {t for _, t in _math2_actors() - before}
            await asyncio.sleep(0.1)
        summary = await run
    assert (summary.done, summary.failed) == (n, 0)
    assert titles == {"ray::HubWorker"}
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
    assert stats["workers"]["made"] == 1 and stats["hubs"] == 1
    assert list(stats["items_per_node"].values()) == [n]
