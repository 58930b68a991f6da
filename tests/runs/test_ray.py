"""The Ray executor against the local one, on a Ray cluster the tests start themselves, with the
fake model server and the fake REPL: the same run items and attempts; an item worker (and the
Lean pools it owns) killed mid-run; the driver SIGKILLed and resumed with the options it
recorded; a changed REPL command reaching the REPL in the next run; no actor of a run outliving
it.

Normalised before comparing (and nothing else): database ids (`id`, `run_id`), times
(`finished_at`, `started_at`, `duration_s`, and the `latency_s` / `time_s` / `queue_s` fields
inside the stored replies and Lean results).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from math2.cli import app
from math2.lean import ReplBackend
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import read_log, received, repeats
from math2.runs import Resource, execute
from math2.runs.ray_actors import NAMESPACE, WorkerEnv
from math2.runs.ray_exec import RayOptions, RayUnavailable
from math2.store import Attempt, Run, RunItem, RunSegment, Store
from math2.store.aio import AsyncStore
from tests.runs import ray_job

pytestmark = [pytest.mark.ray, pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]
N = 12


def _ray():
    try:
        import ray
    except ImportError:
        if os.environ.get("MATH2_REQUIRE_RAY"):
            pytest.fail(
                "MATH2_REQUIRE_RAY is set but ray is not installed (pip install math2[ray])"
            )
        pytest.skip("ray is not installed")
    return ray


@pytest.fixture(scope="module")
def cluster():
    ray = _ray()
    env = {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    _forget_auth_token()  # another module's cluster may have left its token cached
    ray.init(
        num_cpus=2,
        namespace=NAMESPACE,
        include_dashboard=False,
        runtime_env={"env_vars": env},
        logging_level="WARNING",
    )
    # Ray keeps the cluster's auth token under the HOME it started with (each test has its own
    # HOME): a driver started in another test's process must be pointed at it.
    _TOKEN.append(Path(os.environ["HOME"]) / ".ray" / "auth_token")
    yield ray
    ray.shutdown()
    _TOKEN.clear()


_TOKEN: list[Path] = []


def _forget_auth_token() -> None:
    """Ray caches one auth token per process: forget it, so the next cluster reads its own."""
    from ray._private.authentication_test_utils import reset_auth_token_state

    reset_auth_token_state()


def _driver_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    if _TOKEN and _TOKEN[-1].exists():
        env["RAY_AUTH_TOKEN_PATH"] = str(_TOKEN[-1])
    return env


@pytest.fixture
def pg():
    """A factory of fresh migrated PostgreSQL stores (dropped afterwards)."""
    admin = os.environ.get("MATH2_TEST_PG_URL")
    if not admin:
        if os.environ.get("MATH2_REQUIRE_PG") or os.environ.get("CI"):
            pytest.fail("MATH2_REQUIRE_PG is set but MATH2_TEST_PG_URL is not")
        pytest.skip("no PostgreSQL server (set MATH2_TEST_PG_URL)")
    admin_url = make_url(admin).set(drivername="postgresql+psycopg")
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    made: list[tuple[str, Store]] = []

    def make() -> Store:
        name = f"math2_ray_{uuid.uuid4().hex[:12]}"
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        store = Store(admin_url.set(database=name).render_as_string(hide_password=False))
        store.upgrade()
        made.append((name, store))
        return store

    yield make
    for name, store in made:
        store.close()
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def math2_actors(ray) -> list[str]:
    """math2's named actors alive on the cluster (a run's hub: its writer and limiters), in
    name order (Ray lists them in no fixed order)."""
    return sorted(n for n in ray.util.list_named_actors() if str(n).startswith("math2-"))


@pytest.fixture
def lean_actors(cluster):
    """The test's runs leave no actor behind: each run's actors end with it."""
    yield
    deadline = time.monotonic() + 30
    while math2_actors(cluster):
        assert time.monotonic() < deadline, f"actors outlived their run: {math2_actors(cluster)}"
        time.sleep(0.2)


_TIMES = {"latency_s", "time_s", "queue_s"}


def _strip(v):
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if k not in _TIMES}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def _rows(store: Store) -> tuple[list, list]:
    """(run items, attempts) with ids and times removed, in a stable order, as JSON text."""
    with store.session() as s:
        items = [
            json.dumps([r.item, r.status, r.stage, r.error, r.attempt_count, r.result])
            for r in s.scalars(select(RunItem))
        ]
        attempts = [
            json.dumps(
                _strip(
                    [
                        a.item,
                        a.stage,
                        a.round,
                        a.sample,
                        a.model,
                        a.template_id,
                        a.template_hash,
                        a.request,
                        a.response,
                        a.verdict,
                        a.error,
                        a.cached,
                        a.tokens_in,
                        a.tokens_out,
                    ]
                ),
                sort_keys=True,
            )
            for a in s.scalars(select(Attempt))
        ]
    return sorted(items), sorted(attempts)


def _checks(repl_log: Path) -> Counter:
    """How many times the fake REPL was asked to check each item's theorem."""
    names = Counter()
    if repl_log.exists():
        for line in repl_log.read_text().splitlines():
            if m := re.search(r"theorem (t\d+)", json.loads(line).get("cmd", "")):
                names[m.group(1)] += 1
    return names


def _resources():
    return {"model": Resource("model", 4), "lean": Resource("lean", 2)}


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


def _ray_run(
    store: Store,
    base_url: str,
    template: str,
    repl_log: Path,
    n: int = N,
    workers_per_node: int = 1,
    **kw,
):
    return execute(
        store,
        ray_job.job(template),
        ray_job.items(n),
        executor="ray",
        ray=RayOptions(
            batch_size=3,
            lean=ray_job.pool_config(repl_log, **kw),
            workers_per_node=workers_per_node,
        ),
        services_factory=functools.partial(ray_job.services, base_url),
        resources=_resources(),
    )


async def test_same_items_and_attempts_as_local(cluster, lean_actors, pg, tmp_path):
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


def test_cli_refuses_ray_on_sqlite(cluster, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "statement": "x"}\n')
    db = f"sqlite:///{tmp_path / 'm.db'}"
    argv = ["--db", db, "formalize", str(inp), "--model", "g", "--judge", "j", "--executor", "ray"]
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2, r.output
    assert "needs a PostgreSQL store" in r.output and "Traceback" not in r.output
    assert "give --db postgresql" in " ".join(r.output.split())


async def test_sqlite_is_refused(cluster, sqlite_store, tmp_path):
    with pytest.raises(RayUnavailable, match="needs a PostgreSQL store"):
        await _ray_run(sqlite_store, "http://127.0.0.1:9/v1", "x", tmp_path / "r.jsonl")


async def _item_worker_pid() -> int:
    """The process of the run's item worker that is not its hub (unnamed: found by the title
    Ray gives it; the hub, which hosts the driver's node's first item worker, is
    `ray::HubWorker`)."""
    import psutil

    deadline = time.monotonic() + 60  # a worker made for the run's first batch may be starting
    while True:
        workers = [
            p
            for p in psutil.Process().children(recursive=True)
            if p.is_running() and _title(p).startswith("ray::ItemWorker")
        ]
        if workers or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert workers, "no item worker is running"
    # the newest: an earlier test's worker may still be on its way out
    return max(workers, key=lambda p: p.create_time()).pid


def _title(p) -> str:
    import psutil

    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


async def test_item_worker_killed_mid_run(cluster, lean_actors, pg, tmp_path):
    """An item worker, which owns its Lean pools, SIGKILLed mid-run (as the OOM killer would):
    its batch goes to a new worker with new pools; every item ends done once, no model call is
    made twice, and only the checks in flight in the dead pool are made again. Two workers on
    the one node: the hub hosts the first (its loss is the hub's, below), the second is
    killed."""
    n = 24
    template = ray_job.write_template(tmp_path)
    store = pg()
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(ray_job.script(), log_path=tmp_path / "llm.jsonl") as srv:
        run = asyncio.create_task(
            _ray_run(
                store, srv.base_url, template, repl_log, n=n, workers_per_node=2, check_delay=0.15
            )
        )
        while len(_checks(repl_log)) < 4:
            await asyncio.sleep(0.05)
        os.kill(await _item_worker_pid(), signal.SIGKILL)
        summary = await asyncio.wait_for(run, 120)
    assert (summary.done, summary.failed) == (n, 0)
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(RunItem)) == n
        verdicts = Counter(a.verdict for a in s.scalars(select(Attempt)))
        workers = s.scalars(select(Run)).one().stats["workers"]
    # the hub's, the one killed, and its successor
    assert workers["lost"] == 1 and workers["made"] == 3
    assert verdicts == Counter({"sorry": n, None: n})  # one check and one model call per item
    entries = read_log(tmp_path / "llm.jsonl")
    assert len(entries) == n and repeats(entries) == {}  # no model call made twice
    checks = _checks(repl_log)
    assert set(checks) == {f"t{k}" for k in range(n)}
    # Only the checks in flight in the killed pool (2 REPLs) are made again, on the new one (a
    # REPL that saw its parent die may finish the check it holds: once more each at most).
    assert sum(checks.values()) - n <= 4


def _count_done(store: Store) -> int:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(RunItem).where(RunItem.status == "done"))


def test_driver_sigkilled_and_resumed_on_ray(cluster, lean_actors, pg, tmp_path):
    """A live Ray run is `running` and held: `runs resume` is refused naming its driver. Killed
    with SIGKILL, `runs resume` takes it over at once and drives it on Ray again (the executor,
    the address and the options the run recorded: batches of 2, 4 items in flight per node):
    done items skipped, nothing finished asked again; the dead driver's actors went with it."""
    n = 24
    template = ray_job.write_template(tmp_path)
    store = pg()
    repl_log = tmp_path / "repl.jsonl"
    address = cluster.get_runtime_context().gcs_address
    env = _driver_env()
    runner = CliRunner()
    with FakeServer(ray_job.script(latency_s=0.1), log_path=tmp_path / "llm.jsonl") as srv:
        argv = [sys.executable, "-m", "tests.runs.ray_driver", address, store.url, srv.base_url]
        argv += [str(repl_log), template, str(n)]
        proc = subprocess.Popen(argv, env=env, cwd=ROOT)
        deadline = time.monotonic() + 90
        while _count_done(store) < 6:
            assert proc.poll() is None, "the driver ended before it was killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with store.session() as s:
            run_id = s.scalar(select(Run.id))
        listed = runner.invoke(app, ["--db", store.url, "runs", "list"])
        assert "running" in listed.output and "killed" not in listed.output, listed.output
        held = runner.invoke(app, ["--db", store.url, "runs", "resume", str(run_id)])
        assert held.exit_code == 2 and f"pid {proc.pid}" in held.output, held.output
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)  # let Ray end the dead driver's tasks
        done_before = _count_done(store)
        assert done_before < n
        with store.session() as s:
            checked = {a.item for a in s.scalars(select(Attempt).where(Attempt.stage == "compile"))}
        stored = ray_job.stored_requests(store)
        asked = read_log(tmp_path / "llm.jsonl")
        calls_before = len(asked)
        # Compared in the form that matches: every stored reply is one the server received.
        assert stored and stored <= received(asked)
        checks_before = _checks(repl_log)
        out = runner.invoke(app, ["--db", store.url, "runs", "resume", str(run_id)])
    assert out.exit_code == 0, out.output
    assert (
        f"{n - done_before} done, 0 failed, {done_before} already finished (on ray)" in out.output
    )
    assert _count_done(store) == n
    # Nothing finished before the kill was asked again: no stored reply, no stored check.
    after = received(read_log(tmp_path / "llm.jsonl")[calls_before:])
    assert after, "nothing was asked after the loss: the test shows nothing"
    assert not after & stored
    again = _checks(repl_log) - checks_before
    assert not set(again) & checked
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Attempt)) == 2 * n
        segs = s.scalars(select(RunSegment).order_by(RunSegment.id)).all()
    assert [(g.executor, g.address, g.status) for g in segs] == [
        ("ray", address, "killed"),
        ("ray", address, "done"),
    ]
    assert sum(segs[1].stats["items_per_node"].values()) == n - done_before
    # The resume ran with the options the driver gave, not the defaults (batches of 32, items
    # in flight from the capacities: 2 × (2 REPLs + 4 model slots) = 12).
    assert segs[0].options == segs[1].options
    assert (segs[1].options["batch_size"], segs[1].options["items_per_node"]) == (2, 4)
    assert segs[1].stats["in_flight"] == {"per_node": 4, "most": 4}
    shown = runner.invoke(app, ["--db", store.url, "runs", "show", str(run_id)])
    assert "ray: batches of 2 · ≤ 4 items in flight per node (most 4 in all)" in shown.output


def test_a_second_driver_on_a_live_ray_run_is_refused(cluster, lean_actors, pg, tmp_path):
    """Two drivers of one Ray run: while the first lives (it holds the run's lease, renewed by
    its heartbeat), the second exits 2 naming it, having run nothing; the run ends with exactly
    one result per item — one model call, one check, two attempts each."""
    n = 32  # 4 in flight, 1 s a call: the first driver lives for 8 s at least
    template = ray_job.write_template(tmp_path)
    store = pg()
    repl_log = tmp_path / "repl.jsonl"
    address = cluster.get_runtime_context().gcs_address
    with FakeServer(ray_job.script(latency_s=1.0), log_path=tmp_path / "llm.jsonl") as srv:
        argv = [sys.executable, "-m", "tests.runs.ray_driver", address, store.url, srv.base_url]
        argv += [str(repl_log), template, str(n)]
        first = subprocess.Popen(argv, env=_driver_env(), cwd=ROOT, stdout=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while _count_done(store) < 2:
            assert first.poll() is None, "the first driver ended before the second started"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = subprocess.run(
            argv, env=_driver_env(), cwd=ROOT, capture_output=True, text=True, timeout=180
        )
        assert first.poll() is None, "the first driver ended before the second was answered"
        out, _ = first.communicate(timeout=180)
    assert second.returncode == 2, second.stderr[-3000:]
    assert "is being driven by" in second.stderr and f"pid {first.pid}" in second.stderr
    assert first.returncode == 0
    assert json.loads(out.decode().strip().splitlines()[-1])["done"] == n
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 1
        items = s.scalars(select(RunItem)).all()
        assert sorted(i.item for i in items) == sorted(f"t{k}" for k in range(n))
        assert {i.status for i in items} == {"done"}
        assert s.scalar(select(func.count()).select_from(Attempt)) == 2 * n
        segs = s.scalars(select(RunSegment)).all()
    assert [(g.executor, g.status) for g in segs] == [("ray", "done")]  # the second opened none
    entries = read_log(tmp_path / "llm.jsonl")
    assert len(entries) == n and repeats(entries) == {}
    assert _checks(repl_log) == Counter({f"t{k}": 1 for k in range(n)})


async def test_a_changed_repl_command_reaches_the_repl(cluster, lean_actors, pg, tmp_path):
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


def test_runs_actors_list_and_stop_what_no_run_owns(cluster, lean_actors, tmp_path):
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


async def test_the_hub_lost_mid_run_is_made_again(cluster, lean_actors, pg, tmp_path):
    """The run's hub — its one writer, the judge of its nodes' Lean, its limiters — killed
    mid-run: the driver makes it again from the store's state and the run goes on. Every item
    ends done once; no stored reply is asked again, no stored check made again; the run's
    stats name the two hubs."""
    n = 24
    template = ray_job.write_template(tmp_path)
    store = pg()
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(ray_job.script(latency_s=0.1), log_path=tmp_path / "llm.jsonl") as srv:
        run = asyncio.create_task(_ray_run(store, srv.base_url, template, repl_log, n=n))
        while _count_done(store) < 4:
            assert not run.done(), "the run ended before its hub was lost"
            await asyncio.sleep(0.05)
        (name,) = [x for x in math2_actors(cluster) if x.startswith("math2-hub-")]
        cluster.kill(cluster.get_actor(name, namespace=NAMESPACE))
        stored = ray_job.stored_requests(store)
        asked = read_log(tmp_path / "llm.jsonl")
        calls_before = len(asked)
        # Compared in the form that matches: every stored reply is one the server received.
        assert stored and stored <= received(asked)
        with store.session() as s:
            checked = {a.item for a in s.scalars(select(Attempt).where(Attempt.stage == "compile"))}
        checks_before = _checks(repl_log)
        summary = await asyncio.wait_for(run, 240)
    assert (summary.done, summary.failed) == (n, 0)
    assert _count_done(store) == n
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
        assert s.scalar(select(func.count()).select_from(Attempt)) == 2 * n
    assert stats["hubs"] == 2
    after = received(read_log(tmp_path / "llm.jsonl")[calls_before:])
    assert after, "nothing was asked after the hub was lost: the test shows nothing"
    assert not after & stored
    assert not set(_checks(repl_log) - checks_before) & checked


async def test_k_pools_of_one_repl_check_k_items_at_once(cluster, lean_actors, pg, tmp_path):
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


async def test_the_hub_hosts_the_drivers_nodes_item_worker(cluster, lean_actors, pg, tmp_path):
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
