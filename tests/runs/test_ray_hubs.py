"""The driver's hubs without a cluster: a hub that hosted its node's item worker and died is
made again as a bare `RunHub`, so a flaky worker costs the run's writer one remake, not its
whole budget (`HUB_REMAKES`); its node gets plain item workers, budgeted per node as any."""

from __future__ import annotations

from typing import Any

from math2.runs.ray_guard import HUB_REMAKES, Hubs
from math2.runs.ray_hub import RunHub
from math2.runs.ray_tasks import HubWorker

HOME = "ab" * 28  # a node id


class FakeActorClass:
    def __init__(self, ray: FakeRay, cls: type):
        self.ray, self.cls = ray, cls

    def options(self, **kw: Any) -> FakeActorClass:
        return self

    def remote(self, *args: Any, **kw: Any) -> object:
        actor = object()
        self.ray.made.append((self.cls, actor))
        return actor


class FakeRay:
    def __init__(self) -> None:
        self.made: list[tuple[type, object]] = []
        self.killed: list[object] = []

    def remote(self, cls: type) -> FakeActorClass:
        return FakeActorClass(self, cls)

    def kill(self, actor: object) -> None:
        self.killed.append(actor)


def test_a_hub_that_hosted_a_worker_and_died_is_made_again_bare():
    ray = FakeRay()
    hosting = ({"num_cpus": 1}, {"lean": None, "pools": 1})
    hubs = Hubs(ray, HOME, "postgresql://x", None, host=lambda: hosting)
    assert hubs.hosting and ray.made[0][0] is HubWorker
    first = hubs.hub
    hubs.remake(1, None, "ActorDiedError: its worker died")
    assert first in ray.killed
    assert not hubs.hosting and ray.made[1][0] is RunHub  # no longer hosts: a bare hub
    for _ in range(HUB_REMAKES - 1):
        hubs.remake(1, None, "ActorDiedError: the hub's node restarted")
    assert [cls for cls, _ in ray.made] == [HubWorker] + [RunHub] * HUB_REMAKES


def test_a_hub_that_never_hosted_stays_bare():
    ray = FakeRay()
    hubs = Hubs(ray, HOME, "postgresql://x", None)
    hubs.remake(1, None, "ActorDiedError")
    assert [cls for cls, _ in ray.made] == [RunHub, RunHub] and not hubs.hosting
