"""The Ray executor on a cluster of several nodes started with Ray's own tools on this machine
(`ray start --head` and more `ray start --address`, loopback, one CPU each; one cluster for the
module): a run's items land on every node and `runs show` names them; a model endpoint's
concurrency holds across the nodes; nodes that join mid-run get work — or, running another Lean
than the run's, are refused —; a worker node killed mid-run loses no finished item.

The nodes are separate raylets (each with its own item worker and Lean pools) sharing one host;
"killing a node" SIGKILLs that raylet and every process under it, which is what Ray sees when a
machine is lost.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import read_log, received
from math2.runs import execute
from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_exec import RayOptions
from math2.store import Attempt, Run, RunItem, Store
from tests.runs import ray_job
from tests.runs.ray_cluster import _checks, _count_done, _ray, math2_actors, pg  # noqa: F401
from tests.runs.ray_multinode import Cluster

pytestmark = [pytest.mark.ray, pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def nodes() -> Iterator[Cluster]:
    """A head node and two more: the cluster of this module's tests (they run in order; the
    last one loses a node)."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()
    from ray._private.authentication_test_utils import reset_auth_token_state

    c = Cluster()
    with pytest.MonkeyPatch.context() as mp:
        try:
            c.start_head()
            c.add_node()
            c.add_node()
            # This process joins with the cluster's token (Ray caches a token per process).
            mp.delenv("RAY_AUTH_TOKEN", raising=False)
            mp.setenv("RAY_AUTH_MODE", "token")
            mp.setenv("RAY_AUTH_TOKEN_PATH", str(c.token))
            reset_auth_token_state()
            ray.init(address=c.address, namespace=NAMESPACE, logging_level="WARNING")
            _wait_nodes(ray, 3)
            yield c
        finally:
            if ray.is_initialized():
                ray.shutdown()
            c.stop()
    reset_auth_token_state()  # this process's auth settings as they were, Ray's cache with them


def _wait_nodes(ray, n: int) -> None:
    deadline = time.monotonic() + 90
    while len(_alive(ray)) < n:
        assert time.monotonic() < deadline, f"the cluster never reached {n} nodes"
        time.sleep(0.2)


def _driver(c: Cluster, store: Store, base_url: str, tmp_path: Path, n: int) -> list[str]:
    template = ray_job.write_template(tmp_path)
    argv = [sys.executable, "-m", "tests.runs.ray_driver", c.address, store.url, base_url]
    return [*argv, str(tmp_path / "repl.jsonl"), template, str(n)]


def _alive(ray) -> list[str]:
    return sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])


def _named(ray, prefix: str, node: str | None = None) -> list:
    """The live actors of a run on this cluster whose names start with `prefix` (on `node`)."""
    return [
        ray.get_actor(n, namespace=NAMESPACE)
        for n in math2_actors(ray)
        if n.startswith(prefix) and (node is None or node in n)
    ]


def test_items_land_on_every_node(nodes, pg, tmp_path):  # noqa: F811
    ray = _ray()
    n = 24
    store = pg()
    alive = _alive(ray)
    with FakeServer(ray_job.script(latency_s=0.05), log_path=tmp_path / "llm.jsonl") as srv:
        argv = _driver(nodes, store, srv.base_url, tmp_path, n)
        out = subprocess.run(
            argv, env=nodes.driver_env(), cwd=ROOT, capture_output=True, text=True, timeout=300
        )
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert (summary["done"], summary["failed"]) == (n, 0)
    with store.session() as s:
        run = s.scalars(select(Run)).one()
        stats = run.stats
    assert sorted(stats["nodes"]) == alive
    per_node = stats["items_per_node"]
    assert sorted(per_node) == alive and all(per_node[x] > 0 for x in alive), per_node
    assert sum(per_node.values()) == n
    # Each node's item worker reported its pools' Lean, all one Lean, and none was refused.
    assert sorted(stats["lean_nodes"]) == alive and stats["refused_nodes"] == {}
    # Each node's own pools did that node's checks; every check was made once.
    assert _checks(tmp_path / "repl.jsonl") == {f"t{k}": 1 for k in range(n)}
    r = CliRunner().invoke(app, ["--db", store.url, "runs", "show", str(run.id)])
    assert r.exit_code == 0, r.output
    assert f"executor: ray on {len(alive)} node(s):" in r.output
    assert all(x in r.output for x in alive)


def _run(store: Store, base_url: str, tmp_path: Path, n: int, concurrency: int, **pool):
    """The test job on this process's cluster, its endpoint at `concurrency` calls at once."""
    return execute(
        store,
        ray_job.job(ray_job.write_template(tmp_path)),
        ray_job.items(n),
        executor="ray",
        ray=RayOptions(batch_size=2, lean=ray_job.pool_config(tmp_path / "repl.jsonl", **pool)),
        services_factory=functools.partial(ray_job.services, base_url, concurrency=concurrency),
        resources=ray_job.resources(),
    )


async def test_endpoint_concurrency_holds_across_nodes(nodes, pg, tmp_path):  # noqa: F811
    """Concurrency 2 for the model's endpoint: never more than 2 calls in flight at the server,
    however many nodes and item workers call it (each batch task once allowed 2 of its own)."""
    ray = _ray()
    n, cap = 24, 2
    store = pg()
    with FakeServer(ray_job.script(latency_s=0.3)) as srv:
        summary = await _run(store, srv.base_url, tmp_path, n, cap)
        most = srv.max_active
    assert (summary.done, summary.failed) == (n, 0)
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
    assert len([x for x, k in stats["items_per_node"].items() if k]) == len(_alive(ray)) >= 3
    assert most == cap  # reached, never passed, at the server
    (limit,) = stats["limits"].values()
    assert limit["capacity"] == cap and limit["max_in_flight"] == cap and limit["calls"] == n
    shown = CliRunner().invoke(app, ["--db", store.url, "runs", "show", str(summary.run_id)])
    assert f"fake-model@{srv.base_url}: ≤ 2 calls at once (most 2)" in shown.output, shown.output


async def test_nodes_that_join_mid_run(nodes, pg, tmp_path):  # noqa: F811
    """Two nodes join mid-run. One gets an item worker with its Lean pools and items to run; the
    other runs another Lean than the run's (here: the fake REPL with the other wording) and is
    refused — its batches go to the other nodes. The run finishes with every item once."""
    ray = _ray()
    n = 80
    store = pg()
    before = set(_alive(ray))
    with FakeServer(ray_job.script(latency_s=0.3)) as srv:
        run = asyncio.create_task(
            _run(store, srv.base_url, tmp_path, n, 1, module="tests.runs.node_repl")
        )
        while _count_done(store) < 4:
            assert not run.done(), "the run ended before a node joined"
            await asyncio.sleep(0.1)
        # one after the other: two raylets starting at once on one machine can race for a port
        await asyncio.to_thread(nodes.add_node)
        await asyncio.to_thread(nodes.add_node, {"MATH2_TEST_NODE_WORDING": "old"})
        new = set(_alive(ray)) - before
        assert len(new) == 2
        (hub,) = _named(ray, "math2-hub-")
        while not (await hub.report.remote())["refused_nodes"]:
            assert not run.done(), "the run ended before the other Lean's node got a batch"
            await asyncio.sleep(0.2)
        summary = await asyncio.wait_for(run, 300)
    assert (summary.done, summary.failed) == (n, 0)
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
    ((other, why),) = stats["refused_nodes"].items()
    (joined,) = new - {other}
    assert "fake-repl" in why and "not the run's Lean" in why
    assert other not in stats["items_per_node"]
    assert stats["items_per_node"].get(joined, 0) > 0, stats["items_per_node"]
    assert joined in stats["lean_nodes"] and joined in stats["nodes"]
    assert _checks(tmp_path / "repl.jsonl") == {f"t{k}": 1 for k in range(n)}


def test_worker_node_lost_mid_run(nodes, pg, tmp_path):  # noqa: F811
    ray = _ray()
    n = 32
    store = pg()
    with FakeServer(ray_job.script(latency_s=0.2), log_path=tmp_path / "llm.jsonl") as srv:
        node_file = tmp_path / "driver-node"
        argv = [*_driver(nodes, store, srv.base_url, tmp_path, n), str(node_file)]
        proc = subprocess.Popen(
            argv, env=nodes.driver_env(), cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        # a bound on waiting, not a speed: a driver starting on 2 cores at load 30+ took > 120 s
        deadline = time.monotonic() + 300
        while _count_done(store) < 4:
            assert proc.poll() is None, "the driver ended before the node was lost"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # Lose a node that holds neither the driver nor the run's hub and writer, while it works
        # (its item worker holds a permit of the model's endpoint: an item of this run is
        # between its model call and its check there).
        (hub,) = _named(ray, "math2-hub-")  # the run's writer
        keep = {node_file.read_text(), ray.get(hub.counts.remote())["node"]}
        lost = None
        while lost is None:
            assert proc.poll() is None and time.monotonic() < deadline
            limits = ray.get(hub.report.remote())["limits"].values()
            busy = {x for lim in limits for x in lim.get("held_by", {})}
            lost = next((x for x in set(_alive(ray)) - keep if x in busy), None)
            time.sleep(0.05)
        nodes.kill_node(lost)
        with store.session() as s:
            done_before = set(s.scalars(select(RunItem.item).where(RunItem.status == "done")).all())
            checked = {a.item for a in s.scalars(select(Attempt).where(Attempt.stage == "compile"))}
        stored = ray_job.stored_requests(store)
        asked = read_log(tmp_path / "llm.jsonl")
        calls_before = len(asked)
        # Compared in the form that matches: every stored reply is one the server received.
        assert stored and stored <= received(asked)
        checks_before = _checks(tmp_path / "repl.jsonl")
        stdout, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0
    assert done_before and len(done_before) < n
    # The driver's last JSON line (Ray also forwards its retry notices to the driver's stdout).
    summary = json.loads([x for x in stdout.splitlines() if x.startswith("{")][-1])
    assert (summary["done"], summary["failed"]) == (n, 0)
    # Whether Ray's "will be retried" notice reaches the driver's stdout depends on timing (the
    # node may be between batches when it is killed, and log forwarding is best effort), so the
    # test holds the run to its results: every item done once, none lost, none repeated.
    assert _count_done(store) == n
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
        assert s.scalar(select(func.count()).select_from(Attempt)) == 2 * n
        # Every item finished before the node was lost kept its attempts: one call, one check.
        for item in done_before:
            assert s.scalar(select(func.count()).where(Attempt.item == item)) == 2
    assert lost in stats["nodes"] and sum(stats["items_per_node"].values()) >= n - len(done_before)
    # Nothing finished before the loss was asked again: no stored reply, no stored check.
    after = received(read_log(tmp_path / "llm.jsonl")[calls_before:])
    assert after, "nothing was asked after the loss: the test shows nothing"
    assert not after & stored
    again = _checks(tmp_path / "repl.jsonl") - checks_before
    assert not set(again) & checked


async def test_a_node_lost_under_a_tight_cap(nodes, pg, tmp_path):  # noqa: F811
    """A cap of 1 call at once on the model's endpoint, and the node whose worker holds that
    one permit is lost: the limiter drops the dead node's permits and queued requests (Ray says
    the node died), so the run goes on at its cap — every item done, never two calls at once —
    instead of waiting for the permit's timeout (an hour at the default settings)."""
    ray = _ray()
    n, cap = 24, 1
    store = pg()
    with FakeServer(ray_job.script(latency_s=1.0), log_path=tmp_path / "llm.jsonl") as srv:
        run = asyncio.create_task(_run(store, srv.base_url, tmp_path, n, cap))
        while not _named(ray, "math2-hub-"):
            assert not run.done(), "the run ended before it made its hub"
            await asyncio.sleep(0.1)
        (hub,) = _named(ray, "math2-hub-")
        home = (await hub.counts.remote())["node"]  # the driver's node: the hub lives there
        lost = None
        while lost is None:
            assert not run.done(), "the run ended before a worker node held the permit"
            for lim in (await hub.report.remote())["limits"].values():
                held = [x for x in lim.get("held_by", {}) if x != home]
                lost = held[0] if held else None
            await asyncio.sleep(0.05)
        nodes.kill_node(lost)
        killed_at = time.time()
        summary = await asyncio.wait_for(run, 300)  # the permit's timeout would be 3,960 s
    assert (summary.done, summary.failed) == (n, 0)
    assert srv.max_active == cap  # the cap held after the loss
    with store.session() as s:
        stats = s.scalars(select(Run)).one().stats
    (limit,) = stats["limits"].values()
    # Dropped for the lost node: whichever Ray noticed first, the node's death or its worker's
    # silence (the holder's heartbeat stops with the node), never by the permit's timeout.
    assert limit["dropped_on"].get(lost, 0) >= 1 and limit["reclaimed"] == 0, limit
    after = [e["t"] for e in read_log(tmp_path / "llm.jsonl") if e["t"] > killed_at]
    assert after, "no model call after the node was lost"
    print(f"first model call {after[0] - killed_at:.1f} s after the node was lost")
