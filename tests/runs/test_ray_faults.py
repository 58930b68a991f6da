"""The Ray executor's faults, on a Ray cluster the tests start themselves, with the fake model
server and the fake REPL: an item worker (and the Lean pools it owns) killed mid-run; the driver
SIGKILLed and resumed with the options it recorded; a second driver of a live run refused; the
run's hub killed and made again. Every item ends done once, and nothing finished is asked again.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import read_log, received, repeats
from math2.runs.ray_actors import NAMESPACE
from math2.store import Attempt, Run, RunItem, RunSegment
from tests.runs import ray_job
from tests.runs.ray_cluster import (  # noqa: F401 (fixtures)
    ROOT,
    _checks,
    _count_done,
    _driver_env,
    _ray_run,
    _title,
    cluster,
    lean_actors,
    math2_actors,
    pg,
)

pytestmark = [pytest.mark.ray, pytest.mark.postgres]


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


async def test_item_worker_killed_mid_run(cluster, lean_actors, pg, tmp_path):  # noqa: F811
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


def test_driver_sigkilled_and_resumed_on_ray(cluster, lean_actors, pg, tmp_path):  # noqa: F811
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


def test_a_second_driver_on_a_live_ray_run_is_refused(cluster, lean_actors, pg, tmp_path):  # noqa: F811
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


async def test_the_hub_lost_mid_run_is_made_again(cluster, lean_actors, pg, tmp_path):  # noqa: F811
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
