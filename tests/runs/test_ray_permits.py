"""A Ray worker's side of an endpoint's limiter (`ray_limits._Permits`): the permits the hub
granted it pass from one of its calls to the next while their lease lasts, the cap holds, a
permit goes back to the hub when its lease ends (another worker's calls get their turn), and a
call that gave up leaves no permit behind. The hub's `EndpointLimiter` is called in-process.
Also a worker's writes: those that come close together go to the run's writer in one call."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from math2.runs import ray_limits
from math2.runs.ray_hub import RunHub
from math2.runs.ray_limits import EndpointLimiter
from math2.runs.ray_tasks import Local


class _Remote:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *args):
        return self.fn(*args)


class _Hub:
    """One endpoint's limiter as a worker reaches it (`acquire`, `release`)."""

    def __init__(self, lim: EndpointLimiter):
        self.acquire = _Remote(lim.acquire)
        self.release = _Remote(lambda token, uses: asyncio.ensure_future(lim.release(token, uses)))


def _permits(lim: EndpointLimiter, worker: str) -> ray_limits._Permits:
    return ray_limits._Permits(_Hub(lim), "node-a", worker)


async def _calls(
    permits: ray_limits._Permits, n: int, seconds: float, flight: list[int], streams: int = 4
) -> None:
    """`n` calls in `streams` items calling one after the other (as a worker's items do), each
    call holding a permit for `seconds`; `flight`: [now, most]."""

    async def call() -> None:
        token = await permits.take()
        flight[0] += 1
        flight[1] = max(flight[1], flight[0])
        await asyncio.sleep(seconds)
        flight[0] -= 1
        permits.give(token)

    async def item(k: int) -> None:
        for _ in range(k):
            await call()

    await asyncio.gather(*(item(n // streams + (j < n % streams)) for j in range(streams)))


async def _settled(lim: EndpointLimiter) -> None:
    for _ in range(100):
        await asyncio.sleep(0.01)
        if not lim.held and not lim.waiters:
            return


async def test_a_workers_permits_pass_from_call_to_call_under_the_cap(monkeypatch):
    monkeypatch.setattr(ray_limits, "LEASE_S", 60.0)
    lim = EndpointLimiter("m@u", capacity=2, hold_s=3600)
    flight = [0, 0]
    await _calls(_permits(lim, "w"), 20, 0.005, flight)
    await _settled(lim)
    stats = await lim.stats()
    assert flight[1] == 2 and stats["max_in_flight"] == 2  # the cap holds
    assert stats["calls"] == 20  # every call counted at the hub, through the releases
    # a few permits served the 20 calls (one request out per call waiting, granted as the
    # last calls ended and given straight back: none is kept)
    assert stats["permits"] <= 6 and lim.held == {} and not lim.waiters


async def test_without_a_lease_every_call_is_a_round_trip(monkeypatch):
    """The figure the test above is read against: no lease, a permit a call."""
    monkeypatch.setattr(ray_limits, "LEASE_S", 0.0)
    lim = EndpointLimiter("m@u", capacity=2, hold_s=3600)
    flight = [0, 0]
    await _calls(_permits(lim, "w"), 20, 0.005, flight)
    await _settled(lim)
    stats = await lim.stats()
    assert flight[1] == 2 and stats["calls"] == 20 and stats["permits"] >= 20


async def test_a_permit_goes_back_to_the_hub_when_its_lease_ends(monkeypatch):
    """Worker a always has calls waiting; worker b's one call still gets the permit once a's
    lease on it ends (a's calls do not keep it from the rest of the cluster)."""
    monkeypatch.setattr(ray_limits, "LEASE_S", 0.05)
    lim = EndpointLimiter("m@u", capacity=1, hold_s=3600)
    a, b = _permits(lim, "a"), _permits(lim, "b")
    busy = asyncio.ensure_future(_calls(a, 200, 0.01, [0, 0]))  # about 2 s of calls
    await asyncio.sleep(0.05)
    token = await asyncio.wait_for(b.take(), 1.0)  # a's stream is far from done
    assert not busy.done() and lim.held[token][2] == "b"
    b.give(token)
    await busy
    await _settled(lim)
    assert lim.held == {} and (await lim.stats())["calls"] == 201


async def test_a_call_that_gives_up_leaves_no_permit(monkeypatch):
    monkeypatch.setattr(ray_limits, "LEASE_S", 60.0)
    lim = EndpointLimiter("m@u", capacity=1, hold_s=3600)
    p = _permits(lim, "w")
    first = await p.take()
    waiting = asyncio.ensure_future(p.take())
    await asyncio.sleep(0.02)
    waiting.cancel()  # its caller gives up while the permit is held
    p.give(first)  # no call waits: back to the hub
    await _settled(lim)
    assert lim.held == {} and not lim.waiters
    again = await asyncio.wait_for(p.take(), 1.0)  # the cap is whole again
    assert set(lim.held) == {again}


async def test_a_workers_writes_that_come_close_together_share_a_call(monkeypatch, tmp_path):
    """`RemoteStore` holds a write for up to `LINGER_S` while fewer than `FLUSH_AT` are queued,
    so an item's writes and its neighbours', each awaited and leaving a few ms apart, go to the
    run's writer in one call (a call costs the same CPU whatever it carries)."""
    from math2.runs import ray_actors

    monkeypatch.setattr(ray_actors, "LINGER_S", 0.5)
    monkeypatch.setattr(ray_actors, "FLUSH_AT", 4)
    sent: list[int] = []

    class Writer:
        class write_many:  # an actor method's shape
            @staticmethod
            async def remote(fns, node, finished):
                sent.append(len(fns))
                return [(True, fn(None)) for fn in fns]

    rs = ray_actors.RemoteStore(Writer(), f"sqlite:///{tmp_path / 's.db'}", "node-a")

    async def writes(k: int, first: int) -> list[int]:
        await asyncio.sleep(0.01 * first)
        return [await rs.write(lambda s, j=j: 10 * k + j) for j in range(2)]

    got = await asyncio.gather(*(writes(k, k) for k in range(3)))
    assert got == [[0, 1], [10, 11], [20, 21]]  # each write answered with its own result
    # 3 first writes 10 ms apart in one call (held for the others), then the 3 second writes
    # (fewer than FLUSH_AT: held again) in one more
    assert sent == [3, 3]
    monkeypatch.setattr(ray_actors, "FLUSH_AT", 2)
    sent.clear()
    await asyncio.gather(*(writes(k, 0) for k in range(4)))
    assert sent[0] == 4  # FLUSH_AT queued: the call leaves without waiting


class _LimiterHub:
    """The limiter part of a run's hub (`RunHub`'s own methods), without its writer."""

    limiter = RunHub.limiter
    acquire = RunHub.acquire
    release = RunHub.release

    def __init__(self) -> None:
        self.limiters: dict[str, EndpointLimiter] = {}
        self.watched: dict[str, asyncio.Task[None]] = {}


def _client() -> SimpleNamespace:
    endpoint = SimpleNamespace(
        model="m", base_url="http://e/v1", max_retries=1, timeout_s=5, backoff_max_s=1
    )
    return SimpleNamespace(endpoint=endpoint, limiter=SimpleNamespace(name="model", capacity=2))


async def test_each_hub_has_its_own_permits_in_a_worker_process(monkeypatch):
    """A worker process caches its side of an endpoint's limiter by the hub's tag: the permits
    of a run's second hub (made again after the first died), or of another run, are asked of
    that hub, never taken from the first's (called in-process, as a `HubWorker`'s items call
    their hub)."""
    monkeypatch.setattr(ray_limits, "_who", lambda: ("node-a", "worker-1", None))
    monkeypatch.setattr(ray_limits, "_LIMITERS", type(ray_limits._LIMITERS)())
    first, second = _LimiterHub(), _LimiterHub()
    a = ray_limits.ClusterLimiter(Local(first), "tag-a", _client())
    b = ray_limits.ClusterLimiter(Local(second), "tag-b", _client())
    held_a = await a._take()
    key = a.key
    assert b.key == key and first.limiters[key].held and second.limiters == {}
    held_b = await b._take()
    assert len(second.limiters[key].held) == 1 and len(first.limiters[key].held) == 1
    assert held_a[0] is not held_b[0]
    a._give(held_a)
    b._give(held_b)
