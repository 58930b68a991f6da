"""The Ray executor's limits without a cluster: the items in flight per node (Little's law), the
endpoint limiter's permits (the cluster-wide bound on a model's calls in flight), the Lean a node
must run, and the options a run is driven with (`[ray]`, what a run recorded, `--ray-option`)."""

from __future__ import annotations

import asyncio

import pytest
import typer
from typer.testing import CliRunner

from math2.cli import app
from math2.cli._executor import merged_options
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.runs.ray_exec import RayOptions, items_per_node
from math2.runs.ray_hub import left_over, same_lean
from math2.runs.ray_limits import EndpointLimiter


def test_items_per_node_follow_the_repls_and_the_endpoints():
    lean = PoolConfig(argv=["repl"], size=63)
    opts = RayOptions(lean=lean)
    # 63 REPLs, two models of 64 slots over 2 nodes: twice (63 + 64) per node.
    assert items_per_node(opts, {"model:gen": 64, "model:judge": 64, "lean": 63}, 2) == 254
    # More nodes share the model slots: each holds less beside its own REPLs.
    assert items_per_node(opts, {"model:gen": 64, "model:judge": 64}, 4) == 2 * (63 + 32)
    # No Lean, one model: the node's share of its slots; at least two batches.
    assert items_per_node(RayOptions(), {"model": 8}, 2) == 64
    assert items_per_node(RayOptions(batch_size=2), {"model": 8}, 2) == 8
    assert items_per_node(RayOptions(batch_size=2), {}, 2) == 8  # nothing known: 4 batches
    assert items_per_node(RayOptions(items_per_node=7, lean=lean), {"model": 8}, 2) == 7


async def test_the_endpoint_limiter_never_grants_more_than_its_capacity():
    lim = EndpointLimiter("m@u", capacity=2, hold_s=60)
    in_flight = most = 0

    async def call(k: int) -> None:
        nonlocal in_flight, most
        assert await lim.acquire(f"t{k}")
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        await lim.release(f"t{k}")

    await asyncio.gather(*(call(k) for k in range(10)))
    assert most == 2 and (await lim.stats())["max_in_flight"] == 2
    assert (await lim.stats())["calls"] == 10 and lim.held == {}


async def test_a_permit_given_up_or_left_by_a_dead_worker_comes_back():
    lim = EndpointLimiter("m@u", capacity=1, hold_s=0.2)
    await lim.release("early")  # released before its acquire ran (the caller gave up)
    assert await lim.acquire("early") is False and lim.held == {}
    assert await lim.acquire("dead")  # its worker dies holding it
    waiting = asyncio.ensure_future(lim.acquire("next"))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await lim.release("queued")  # not held, not queued: never granted later
    assert "queued" in lim.given_up
    await asyncio.sleep(0.3)
    lim._reclaim()  # what the reaper does every hold_s / 4
    assert await asyncio.wait_for(waiting, 1) and set(lim.held) == {"next"}
    assert (await lim.stats())["reclaimed"] == 1


def test_a_node_must_run_the_runs_lean():
    run = LeanIdentity(kind="repl", lean_version="4.19.0", mathlib_commit="abc", header="h")
    assert same_lean(run, run.model_copy(update={"header": "other header"}))
    assert not same_lean(run, run.model_copy(update={"lean_version": "4.20.0"}))
    assert not same_lean(run, run.model_copy(update={"mathlib_commit": "def"}))


def test_options_from_settings_then_the_run_then_the_command_line():
    configured = {"address": "ray://head:10001", "batch_size": 16, "items_per_node": None}
    opts = merged_options(configured, None, None, None)
    assert (opts.address, opts.batch_size, opts.items_per_node) == ("ray://head:10001", 16, None)
    recorded = {"address": "auto", "batch_size": 2, "items_per_node": 4, "retired_knob": 1}
    opts = merged_options(configured, recorded, None, None)
    assert (opts.address, opts.batch_size, opts.items_per_node) == ("auto", 2, 4)
    opts = merged_options(configured, recorded, ["batch-size=8", "items_per_node=none"], "x:1")
    assert (opts.address, opts.batch_size, opts.items_per_node) == ("x:1", 8, None)
    with pytest.raises(typer.BadParameter, match="KEY one of batch_size"):
        merged_options({}, None, ["batchsize=8"], None)
    with pytest.raises(typer.BadParameter, match="batch_size: Input should be greater"):
        merged_options({}, None, ["batch_size=0"], None)


def test_a_ray_option_on_the_local_executor_is_refused(sqlite_store, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "statement": "x"}\n')
    url = str(sqlite_store.engine.url)
    argv = ["--db", url, "formalize", str(inp), "--model", "g", "--judge", "j"]
    r = CliRunner().invoke(app, [*argv, "--ray-option", "batch_size=8"])
    assert r.exit_code == 2 and "--ray-option is only for --executor ray" in r.output, r.output


def test_left_over_actors_are_those_no_live_hub_owns():
    node = "ab" * 28
    names = [
        "math2-hub-0123456789ab",  # a live run's hub …
        f"math2-lean-0123456789ab-{node}-0",  # … and its Lean actor
        f"math2-lean-fedcba987654-{node}-0",  # a Lean actor whose hub is gone
        f"math2-lean-{node}",  # an older math2's detached Lean actor
        "math2-writer-0123456789abcdef",  # and its detached writer
    ]
    assert left_over(names) == names[2:]
    assert left_over(names[:2]) == []


async def test_a_dead_nodes_permits_and_requests_are_dropped_at_once():
    """A permit belongs to a live caller: when its node dies, its permits and its queued
    requests go at once (not after `hold_s`), and the live callers get them."""
    lim = EndpointLimiter("m@u", capacity=2, hold_s=3600)
    assert await lim.acquire("a1", "node-a", "wa")
    assert await lim.acquire("a2", "node-a", "wa")
    queued_dead = asyncio.ensure_future(lim.acquire("a3", "node-a", "wa"))
    live = asyncio.ensure_future(lim.acquire("b1", "node-b", "wb"))
    await asyncio.sleep(0.01)
    assert not live.done() and not queued_dead.done()
    assert lim.drop({"node-a"}) == 3
    assert await asyncio.wait_for(live, 1) and set(lim.held) == {"b1"}
    assert queued_dead.cancelled()
    assert (await lim.stats())["dropped"] == {"node-a": 3} == (await lim.stats())["dropped_on"]
    assert lim.reclaimed == 0  # dropped for its dead node, not timed out


class _Worker:
    """An item worker's actor as the hub watches it: `until_dead` fails when Ray says it died,
    and otherwise never returns (however blocked its event loop is)."""

    def __init__(self) -> None:
        self.death: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @property
    def until_dead(self):
        death = self.death

        class Call:
            def remote(self):
                return asyncio.shield(death)

        return Call()


async def test_a_dead_workers_permits_are_dropped_and_a_blocked_ones_are_kept(monkeypatch):
    """Liveness is Ray's word: the hub drops the permits and requests of a worker whose actor
    Ray says died, at once, and refuses its late requests; a live worker that says nothing for
    long (its event loop blocked) keeps its permit while its call may still run."""
    from ray.exceptions import ActorDiedError

    from math2.runs.ray_hub import RunHub

    monkeypatch.setattr(RunHub, "__init__", lambda self: None)
    hub = RunHub()
    hub.limiters, hub.watched = {}, {}
    dead, blocked = _Worker(), _Worker()
    assert await hub.limiter("m@u", 2, 3600, "dead-worker", dead)
    assert await hub.limiter("m@u", 2, 3600, "blocked-worker", blocked)
    lim = hub.limiters["m@u"]
    assert await lim.acquire("d", "node-a", "dead-worker")
    assert await lim.acquire("b", "node-a", "blocked-worker")
    waiting = asyncio.ensure_future(lim.acquire("w", "node-b", "other"))
    await asyncio.sleep(0.2)
    lim._reclaim()  # what the limiter's watcher does every WATCH_S: silence takes nothing
    assert set(lim.held) == {"d", "b"} and not waiting.done()
    dead.death.set_exception(ActorDiedError())  # Ray says the worker's actor died
    assert await asyncio.wait_for(waiting, 1) and set(lim.held) == {"b", "w"}
    stats = await lim.stats()
    assert stats["dropped"] == {"dead-worker": 1}
    assert stats["dropped_on"] == {"node-a": 1}  # the node the dead worker was on
    assert await lim.acquire("late", "node-a", "dead-worker") is False  # nobody to grant
    assert set(lim.held) == {"b", "w"}
    for task in hub.watched.values():
        task.cancel()


def test_ray_options_for_lean_actors_and_a_runtime_env():
    opts = merged_options(
        {},
        None,
        [
            "lean_actor_cpus=2",
            "lean_actor_memory=4000000000",
            'runtime_env={"env_vars": {"A": "1"}}',
        ],
        None,
    )
    assert (opts.lean_actor_cpus, opts.lean_actor_memory) == (2.0, 4_000_000_000)
    assert opts.runtime_env == {"env_vars": {"A": "1"}}
    assert opts.recorded()["runtime_env"] == {"env_vars": {"A": "1"}}  # resume keeps it
    with pytest.raises(typer.BadParameter, match="runtime_env is a JSON object"):
        merged_options({}, None, ["runtime_env={not json"], None)


def test_the_ray_line_of_a_killed_segment_names_no_none():
    from math2.cli.runs import _ray_line

    line = _ray_line({"batch_size": 32, "items_per_node": None}, {})
    assert "None" not in line and "items in flight per node from its capacities" in line


async def test_a_second_driver_is_refused_before_it_starts_anything(
    sqlite_store, tmp_path, monkeypatch
):
    """A run a live driver holds (here: this process) is refused — a new run of the same job on
    the same input, and a resume of it — before the Ray executor joins the cluster: no hub, no
    actor, no REPL probe."""
    import os

    from math2.runs import ray_exec
    from math2.runs.claim import Resume, RunRequest
    from math2.runs.identity import run_identity
    from math2.runs.lease import RunHeld
    from math2.runs.lifecycle import hold
    from tests.runs import ray_job

    def joined(options):
        raise AssertionError("the second driver joined the cluster")

    monkeypatch.setattr(ray_exec, "check_store", lambda store: None)  # PostgreSQL in real use
    monkeypatch.setattr(ray_exec, "connect", joined)
    job = ray_job.job(ray_job.write_template(tmp_path))
    with hold(sqlite_store, run_identity(job)) as run_id:
        for request in (None, RunRequest(resume=Resume(run_id))):
            with pytest.raises(
                RunHeld, match=f"run {run_id} is being driven by .* pid {os.getpid()}"
            ):
                await ray_exec.execute_ray(
                    sqlite_store, job, ray_job.items(2), options=RayOptions(), request=request
                )


async def test_a_token_is_given_up_once_and_a_dropped_permits_release_is_none(monkeypatch):
    """The limiter remembers a given-up token until its acquire comes, and at most `REMEMBER`
    of them; the release of a permit it dropped (its node died) or took back is no give-up:
    what it remembers stays bounded however many permits it drops."""
    from math2.runs import ray_limits

    monkeypatch.setattr(ray_limits, "REMEMBER", 8)
    lim = EndpointLimiter("m@u", capacity=100, hold_s=3600)
    for k in range(8):
        assert await lim.acquire(f"d{k}", "node-a", "w")
    assert lim.drop({"node-a"}) == 8
    for k in range(8):
        await lim.release(f"d{k}")  # its worker's late release
    assert not lim.given_up and not lim.ended
    for k in range(50):
        await lim.release(f"g{k}")  # given up, their acquires never come
    assert list(lim.given_up) == [f"g{k}" for k in range(42, 50)]
    assert await lim.acquire("g49") is False and "g49" not in lim.given_up
    assert await lim.acquire("g49") is True  # given up once only


async def test_a_token_given_up_is_not_taken_for_a_permit(monkeypatch):
    """`ClusterLimiter` asks again, under a fresh token, when the limiter answers that its
    token was given up (False): it never goes on holding no permit."""
    from math2.llm.client import LLMClient
    from math2.runs import ray_limits

    lim = EndpointLimiter("m@u", capacity=1, hold_s=3600)

    class Remote:
        def __init__(self, fn):
            self.fn = fn

        def remote(self, *args):
            return self.fn(*args)

    class Actor:
        acquire = Remote(lim.acquire)
        release = Remote(lambda token, uses=1: asyncio.ensure_future(lim.release(token, uses)))

    asked: list[str] = []
    real_acquire = lim.acquire

    async def acquire(token: str, node: str = "", holder: str = "") -> bool:
        asked.append(token)
        if len(asked) == 1:
            await lim.release(token)  # a release of this token ran first
        return await real_acquire(token, node, holder)

    Actor.acquire = Remote(acquire)
    monkeypatch.setattr(ray_limits, "_who", lambda: ("node-a", "worker-a", None))
    client = LLMClient.__new__(LLMClient)
    monkeypatch.setattr(ray_limits, "endpoint_key", lambda c: "m@u")
    monkeypatch.setattr(ray_limits, "hold_s", lambda c: 3600.0)

    class Limiter:
        name, capacity = "model:m", 1

    client.limiter = Limiter()  # type: ignore[assignment]
    cl = ray_limits.ClusterLimiter(hub=None, tag="t", client=client)

    async def permits() -> ray_limits._Permits:
        return ray_limits._Permits(Actor(), "node-a", "worker-a")

    monkeypatch.setattr(cl, "_permits", permits)
    held = await cl._take()
    assert len(asked) == 2 and held[1] == asked[1]
    assert set(lim.held) == {asked[1]}  # the permit it goes on with is the limiter's
    cl._give(held)
    await asyncio.sleep(0)
    assert lim.held == {}


async def test_a_busy_hub_is_not_taken_for_dead(monkeypatch):
    """The driver takes the hub for dead only when Ray says its actor died; a hub slower to
    answer than `PING_S` (busy with writes) is asked again, not made anew."""
    import concurrent.futures
    import threading
    import time

    from ray.exceptions import ActorDiedError

    from math2.runs import ray_guard

    monkeypatch.setattr(ray_guard, "PING_S", 0.05)

    class Ping:
        def __init__(self, answer):
            self.answer = answer

        def remote(self):
            fut: concurrent.futures.Future[bool] = concurrent.futures.Future()
            self.answer(fut)
            return type("Ref", (), {"future": lambda _self: fut})()

    started = time.monotonic()
    pings: list[concurrent.futures.Future[bool]] = []

    def slowly(fut):  # busy: each ping answers once 0.15 s (three pings' time) have gone
        pings.append(fut)

        def answer() -> None:
            if not fut.done():
                fut.set_result(True)

        threading.Timer(max(0.0, started + 0.15 - time.monotonic()), answer).start()

    def dead(fut):
        fut.set_exception(ActorDiedError())

    hubs = ray_guard.Hubs.__new__(ray_guard.Hubs)
    hubs.hub = type("Hub", (), {"ping": Ping(slowly)})()
    assert await hubs.alive() is True and len(pings) >= 3
    hubs.hub = type("Hub", (), {"ping": Ping(dead)})()
    assert await hubs.alive() is False


def test_a_workers_lean_limit_is_its_repls():
    from math2.runs.ray_exec import worker_capacities

    lean = PoolConfig(argv=["repl"], size=1)
    opts = RayOptions(lean=lean, lean_actors_per_node=4)
    # twice its REPLs: each REPL's next check waits in its pool while a result is stored
    assert worker_capacities(opts, {"lean": 1, "model": 8}) == {"lean": 8, "model": 8}
    opts = RayOptions(lean=PoolConfig(argv=["repl"], size=3), lean_actors_per_node=2)
    assert worker_capacities(opts, {"lean": 3}) == {"lean": 12}
    assert worker_capacities(RayOptions(), {"lean": 2, "model": 8}) == {"lean": 2, "model": 8}
