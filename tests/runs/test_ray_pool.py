"""The driver's pool of item workers without a cluster: which error says a worker died (its
batch goes again, the worker leaves the pool) and which says its batch failed inside it (the
run's hub died under it: not the worker's death), and where a batch goes."""

from __future__ import annotations

import asyncio

from ray.exceptions import ActorDiedError, ActorUnavailableError, RayTaskError

from math2.config import RaySettings
from math2.lean.pool import PoolConfig
from math2.runs.ray_pool import Loss, Worker, WorkerPool


class FakeRay:
    def __init__(self) -> None:
        self.killed: list[object] = []

    def kill(self, actor: object) -> None:
        self.killed.append(actor)


def pool_of(nodes: dict[str, int]) -> tuple[WorkerPool, dict[str, Worker]]:
    pool = WorkerPool(FakeRay(), RaySettings(actor_max_restarts=1))
    made = {}
    for node, items in nodes.items():
        w = Worker(actor=object(), node=node)
        w.items = items
        pool.workers[node] = [w]
        made[node] = w
    return pool, made


def test_only_the_workers_own_death_takes_it_out():
    pool, w = pool_of({"a": 0, "b": 0})
    in_batch = RayTaskError("ItemWorker.run", "tb", ActorDiedError()).as_instanceof_cause()
    assert isinstance(in_batch, ActorDiedError)  # what a dead hub raises inside a batch
    assert pool.died(w["a"], in_batch) is Loss.NO and pool.workers["a"] == [w["a"]]
    assert pool.died(w["a"], ValueError("a step failed")) is Loss.NO
    assert pool.died(w["a"], ActorDiedError()) is Loss.NOW
    assert pool.workers["a"] == []
    assert asyncio.run(pool.report()) == {"made": 0, "lost": 1, "most_checks": 0}


def test_a_node_whose_workers_keep_dying_is_given_up():
    """Each worker owns its node's Lean pools: a node whose worker died more than
    `actor_max_restarts` times (here 1) gets no more (the driver refuses it)."""
    pool, w = pool_of({"a": 0})
    assert pool.died(w["a"], ActorDiedError()) is Loss.NOW and pool.given_up("a") is None
    again = Worker(actor=object(), node="a")
    pool.workers["a"] = [again]
    assert pool.died(again, ActorDiedError()) is Loss.NOW
    assert "died 2 times" in (pool.given_up("a") or "") and pool.given_up("b") is None


def test_a_worker_reserves_its_lean_pools():
    """A worker reserves its own CPUs and, per Lean pool it owns, the Lean's CPUs and memory."""
    opts = RaySettings(
        task_cpus=0.5, lean_actors_per_node=2, lean_actor_cpus=1.5, lean_actor_memory=1000
    )
    lean = PoolConfig(argv=["repl"], size=1)
    assert WorkerPool(FakeRay(), opts, lean)._resources() == {"num_cpus": 3.5, "memory": 2000}
    assert WorkerPool(FakeRay(), opts, None)._resources() == {"num_cpus": 0.5}


def test_a_batch_goes_to_the_least_busy_worker_of_a_usable_node():
    pool, w = pool_of({"a": 40, "b": 8, "c": 0})
    assert pool.pick(["a", "b"]) is w["b"]  # c is no longer usable: its worker is ended
    assert pool.ray.killed == [w["c"].actor] and "c" not in pool.workers


def test_a_lost_workers_peak_of_checks_is_kept():
    """`most_checks`: each batch that comes back says its worker's peak so far; a worker lost
    afterwards (not asked at the run's end) keeps it."""
    pool, w = pool_of({"a": 3, "b": 3})
    pool.done(w["a"], [("x", 0)] * 3, most=5)
    pool.done(w["b"], [("y", 0)] * 3, most=2)
    assert pool.died(w["a"], ActorDiedError()) is Loss.NOW
    pool.workers.clear()  # nobody left to ask at the end
    assert asyncio.run(pool.report())["most_checks"] == 5


def test_the_hub_hosts_a_nodes_first_worker_and_is_never_ended_by_the_pool():
    """The run's hub hosting the driver's node's worker: that node's first worker; a node no
    longer usable has its workers ended, but not the hub (the run's writer); a new hub takes
    the dead one's place."""
    pool, w = pool_of({"a": 0, "home": 0})
    hub = object()
    pool.adopt("home", hub)
    assert pool.workers["home"][0].actor is hub and pool.workers["home"][0].hub
    assert pool.made == 1
    pool.pick(["a"])  # home refused: its plain worker ended, the hub not
    assert w["home"].actor in pool.ray.killed and hub not in pool.ray.killed
    assert [x.actor for x in pool.workers["home"]] == [hub]  # still home's first worker
    again = object()
    pool.adopt("home", again)  # the first hub died: the new one takes its place
    assert [x.actor for x in pool.workers["home"]] == [again]


class MakingPool(WorkerPool):
    """A pool that makes stand-in workers (no cluster)."""

    def _make(self, node: str) -> Worker:
        self.made += 1
        return Worker(actor=object(), node=node)


def test_the_hub_stays_its_nodes_worker_while_the_node_is_set_aside():
    """The driver's node set aside for a while (a worker there died: `SUSPECT_S`) and usable
    again: its hub still hosts its first worker, so the node gets `per_node` - 1 new workers
    beside it, never `per_node` (its CPUs reserved twice: under hard affinity one that cannot
    fit stays pending)."""
    pool = MakingPool(FakeRay(), RaySettings(workers_per_node=2))
    hub = object()
    pool.adopt("home", hub)
    pool.pick(["home", "b"])
    plain = [w for w in pool.workers["home"] if not w.hub]
    assert len(plain) == 1
    assert pool.pick(["b"]).node == "b"  # home set aside: its plain worker ended, not the hub
    assert pool.ray.killed == [plain[0].actor]
    pool.pick(["home", "b"])
    assert [w.hub for w in pool.workers["home"]] == [True, False]
    assert pool.workers["home"][0].actor is hub and hub not in pool.ray.killed


def test_a_worker_already_out_of_the_pool_is_not_lost_again():
    """A batch of a worker that left the pool before (a hub a new one replaced, a second batch
    of a dead worker) says `Loss.BEFORE`: its node is not counted against again (the driver
    sets a node aside only for `Loss.NOW`)."""
    pool = MakingPool(FakeRay(), RaySettings())
    pool.adopt("home", object())
    first = pool.workers["home"][0]
    pool.adopt("home", object())  # the first hub died under another batch: a new one
    assert pool.died(first, ActorDiedError()) is Loss.BEFORE
    assert pool.lost == 1 and pool.deaths == {"home": 1}  # counted once, when replaced
    w = pool.pick(["b"])
    assert pool.died(w, ActorDiedError()) is Loss.NOW
    assert w.actor in pool.ray.killed  # ended before its batch goes again
    assert pool.died(w, ActorDiedError()) is Loss.BEFORE
    assert pool.lost == 2 and pool.deaths == {"home": 1, "b": 1}


def test_a_hub_out_of_reach_is_asked_before_it_is_taken_for_dead():
    """`ActorUnavailableError` is a `RayActorError`: of the live hub hosting a worker it says
    the hub is out of reach, not dead, until the hub is asked (`Hubs.alive`): a hub that lives
    stays (`Loss.AWAY`: not ended, not counted, no new hub); one that does not is lost. A plain
    worker out of reach is ended before its batch goes again (no item runs twice)."""
    pool = MakingPool(FakeRay(), RaySettings())
    hub = object()
    pool.adopt("home", hub)
    worker = pool.workers["home"][0]
    away = ActorUnavailableError("unreachable", None)
    asked: list[bool] = []

    async def lives() -> bool:
        asked.append(True)
        return True

    async def dead() -> bool:
        return False

    assert asyncio.run(pool.loss(worker, away, lives)) is Loss.AWAY and asked == [True]
    assert pool.workers["home"] == [worker] and pool.lost == 0 and pool.ray.killed == []
    assert asyncio.run(pool.loss(worker, ValueError("a step"), lives)) is Loss.NO
    assert asyncio.run(pool.loss(worker, away, dead)) is Loss.NOW and pool.workers["home"] == []
    plain = pool.pick(["b"])
    assert asyncio.run(pool.loss(plain, away, None)) is Loss.NOW
    assert pool.ray.killed == [plain.actor] and pool.lost == 2


def test_a_bare_new_hub_leaves_its_node_to_plain_workers():
    """A hosting hub died and the new one is bare (`Hubs`: once a hosting hub died): the dead
    hub leaves the pool (counted) and its node gets `per_node` plain workers."""
    pool = MakingPool(FakeRay(), RaySettings(workers_per_node=1))
    pool.adopt("home", object())
    pool.adopt("home", None)
    assert pool.workers["home"] == [] and pool.lost == 1
    assert not pool.pick(["home"]).hub and len(pool.workers["home"]) == 1
