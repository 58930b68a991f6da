"""The cluster-wide bounds of a Ray run's model calls: one `EndpointLimiter` per model endpoint
(held by the run's hub, on the driver's node) holds its permits, and each worker's model clients
take them through a `ClusterLimiter` (`bind_clients`). A permit belongs to a live caller: the
permits and queued requests of a node Ray reports dead are dropped within `WATCH_S` of that
report, and those of an item worker as soon as Ray says its actor died (the hub keeps a call to
the worker open, `ItemWorker.until_dead`, which Ray fails when the actor dies: its process or its
node), so a capped run keeps its cap and its pace when it loses a node or a worker. Liveness is
Ray's word, never a silence: a live worker whose event loop is blocked keeps its permits (its
calls may still run), however long.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
import uuid
from typing import TYPE_CHECKING, Any

from math2.util.limits import Resource

if TYPE_CHECKING:  # the hub's process imports this module: no HTTP client
    from math2.llm.client import LLMClient

#: How often a limiter asks Ray which nodes are alive (a dead node's permits go at once).
WATCH_S = 1.0
#: How long a worker hands a permit the hub granted it from one of its calls to the next before
#: it gives it back (one round trip to the hub per permit and `LEASE_S`, not two per call).
LEASE_S = 1.0
#: How many tokens a limiter remembers as given up (released before their acquire ran) or ended
#: (dropped or reclaimed before their release came): each is looked for once, then forgotten.
REMEMBER = 4096


def _remember(tokens: collections.OrderedDict[str, None], token: str) -> None:
    tokens[token] = None
    while len(tokens) > REMEMBER:
        tokens.popitem(last=False)


class EndpointLimiter:
    """At most `capacity` calls to one model endpoint at once across the cluster (in the run's
    hub, an async Ray actor): `acquire(token, node, holder)` waits for a permit,
    `release(token)` gives it back.

    A permit belongs to a live caller: the limiter asks Ray which nodes are alive every
    `WATCH_S` and drops at once the permits and queued requests of a node that died; the hub
    drops those of a worker Ray says died (`drop({holder}, "holder")`: its process died on a
    live node), and a request from a holder dropped so is refused (False). A permit
    held longer than `hold_s` (longer than any call can last) is taken back as a last resort. A
    token released before its acquire ran (the caller gave up) is never granted: its acquire
    returns False. A token is remembered as given up once, and forgotten when its acquire comes;
    the release of a permit the limiter dropped or took back is no give-up (at most `REMEMBER`
    of each kind are kept)."""

    def __init__(self, key: str, capacity: int, hold_s: float):
        self.key, self.capacity, self.hold_s = key, capacity, hold_s
        self.held: dict[str, tuple[float, str, str]] = {}  # token: (since, node, holder)
        self.waiters: collections.deque[tuple[str, str, str, asyncio.Future[None]]] = (
            collections.deque()
        )
        self.given_up: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.ended: collections.OrderedDict[str, None] = collections.OrderedDict()  # dropped
        self.gone: collections.OrderedDict[str, None] = collections.OrderedDict()  # dead holders
        self.acquired = self.max_in_flight = self.reclaimed = 0
        self.used = 0  # calls its permits served, as their releases say
        self.dropped: dict[str, int] = {}  # node or holder: permits and requests dropped
        # the node each dropped permit or request was on, whichever sign of death came first
        self.dropped_on: dict[str, int] = {}
        self._watch: asyncio.Task[None] | None = None

    async def acquire(self, token: str, node: str = "", holder: str = "") -> bool:
        self._start()
        if holder in self.gone:  # a late request of a worker Ray said died: nobody to grant
            _remember(self.ended, token)
            return False
        if token in self.given_up:
            del self.given_up[token]
            return False
        if len(self.held) < self.capacity and not self.waiters:
            self._grant(token, node, holder)
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiters.append((token, node, holder, fut))
            await fut
        return True

    async def release(self, token: str, uses: int = 1) -> None:
        """`token`'s permit is free; `uses`: the calls it served (a worker hands a permit from
        call to call before it gives it back)."""
        self.used += uses
        if self.held.pop(token, None) is None:
            for i, (t, _, _, fut) in enumerate(self.waiters):
                if t == token:
                    del self.waiters[i]
                    fut.cancel()
                    return
            if token in self.ended:  # dropped or taken back already: its release ends it
                del self.ended[token]
            else:
                _remember(self.given_up, token)
            return
        self._wake()

    def _grant(self, token: str, node: str, holder: str) -> None:
        self.held[token] = (time.monotonic(), node, holder)
        self.acquired += 1
        self.max_in_flight = max(self.max_in_flight, len(self.held))

    def _wake(self) -> None:
        while self.waiters and len(self.held) < self.capacity:
            token, node, holder, fut = self.waiters.popleft()
            if not fut.done():
                self._grant(token, node, holder)
                fut.set_result(None)

    def drop(self, dead: set[str], why: str = "node") -> int:
        """Drop the permits and queued requests of the nodes (or holders) in `dead`; how many."""
        by_node = why == "node"
        if not by_node:
            for h in dead:
                _remember(self.gone, h)
        n = 0
        for token, (_, node, holder) in list(self.held.items()):
            who = node if by_node else holder
            if who in dead:
                del self.held[token]
                _remember(self.ended, token)
                self._count_drop(who, node)
                n += 1
        keep: collections.deque[tuple[str, str, str, asyncio.Future[None]]] = collections.deque()
        for waiter in self.waiters:
            _, node, holder, fut = waiter
            who = node if by_node else holder
            if who in dead:
                fut.cancel()  # its caller is gone
                _remember(self.ended, waiter[0])
                self._count_drop(who, node)
                n += 1
            else:
                keep.append(waiter)
        self.waiters = keep
        self._wake()
        return n

    def _count_drop(self, who: str, node: str) -> None:
        self.dropped[who] = self.dropped.get(who, 0) + 1
        self.dropped_on[node] = self.dropped_on.get(node, 0) + 1

    def _reclaim(self) -> None:
        cutoff = time.monotonic() - self.hold_s
        for token, (since, _, _) in list(self.held.items()):
            if since < cutoff:
                del self.held[token]
                _remember(self.ended, token)
                self.reclaimed += 1
        self._wake()

    def _start(self) -> None:
        if self._watch is None:
            self._watch = asyncio.ensure_future(self._watching())

    async def _watching(self) -> None:
        import ray

        while True:
            await asyncio.sleep(WATCH_S)
            if self.held or self.waiters:
                try:
                    nodes = await asyncio.to_thread(ray.nodes)
                except Exception:  # the GCS out of reach for a moment: ask again
                    nodes = []
                dead = {str(n["NodeID"]) for n in nodes if not n.get("Alive")}
                if dead:
                    self.drop(dead)
            self._reclaim()

    async def stats(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "max_in_flight": self.max_in_flight,
            "calls": self.used,
            "permits": self.acquired,
            "reclaimed": self.reclaimed,
            "dropped": dict(self.dropped),
            "dropped_on": dict(self.dropped_on),
            "held_by": dict(collections.Counter(node for _, node, _ in self.held.values())),
        }


def endpoint_key(client: LLMClient) -> str:
    """The endpoint a client calls (its model at its base URL)."""
    ep = client.endpoint
    return f"{ep.model}@{ep.base_url}"


def hold_s(client: LLMClient) -> float:
    """Longer than one call of the client can hold a slot: every try at its timeout, every
    backoff at its cap, twice over."""
    ep = client.endpoint
    return 2 * (ep.max_retries + 1) * (ep.timeout_s + ep.backoff_max_s)


class _Permits:
    """This worker process's side of one endpoint's limiter: the permits the hub granted it and
    the calls waiting here for one. Each waiting call has a request out at the hub; a permit
    whose call ended goes to the next call waiting here while it is younger than `LEASE_S`
    (no round trip to the hub), and back to the hub otherwise, or when no call waits (other
    nodes' requests queue there, in order). The hub never grants more than its capacity, so the
    bound holds however the permits move inside a worker."""

    def __init__(self, actor: Any, node: str, holder: str):
        self.actor, self.node, self.holder = actor, node, holder
        self.waiting: collections.deque[asyncio.Future[str]] = collections.deque()
        self.asking = 0  # requests out at the hub (at least one per call waiting here)
        self.since: dict[str, float] = {}  # token: when the hub granted it
        self.uses: dict[str, int] = {}  # token: the calls it served here
        self._asks: set[asyncio.Future[None]] = set()  # held: the loop keeps weak references

    async def take(self) -> str:
        """A permit (its token) for one call."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        if self.asking < sum(not f.done() for f in self.waiting):
            self.asking += 1
            ask = asyncio.ensure_future(self._ask())
            self._asks.add(ask)
            ask.add_done_callback(self._asks.discard)
        try:
            return await fut
        except BaseException:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                self.give(fut.result(), used=False)  # granted as its caller gave up
            raise

    async def _ask(self) -> None:
        """One request at the hub, under a fresh token (a token the limiter answers False for
        was given up — a release of it ran first — and holds no permit: another is asked for);
        the permit goes to a call waiting here, or back."""
        token = ""
        try:
            granted = False
            while not granted:
                token = uuid.uuid4().hex
                granted = await self.actor.acquire.remote(token, self.node, self.holder)
        except BaseException as exc:
            self.asking -= 1
            with contextlib.suppress(Exception):  # the permit, granted or not, is not kept
                self.actor.release.remote(token, 0)
            for fut in self.waiting:
                if not fut.done():
                    fut.set_exception(exc)
                    break
            return
        self.asking -= 1
        self.since[token], self.uses[token] = time.monotonic(), 0
        if not self._hand(token):
            self._back(token)

    def _hand(self, token: str) -> bool:
        """Give `token` to the first call waiting here; whether one was."""
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                self.uses[token] += 1
                fut.set_result(token)
                return True
        return False

    def give(self, token: str, used: bool = True) -> None:
        """A call's permit is free: to the next call waiting here while the lease lasts, else
        back to the hub."""
        if not used:
            self.uses[token] -= 1
        if time.monotonic() - self.since[token] < LEASE_S and self._hand(token):
            return
        self._back(token)

    def _back(self, token: str) -> None:
        del self.since[token]
        # its order does not matter: a permit is by token; the hub counts the calls it served
        self.actor.release.remote(token, self.uses.pop(token))


_LIMITERS: collections.OrderedDict[tuple[str, str], _Permits] = collections.OrderedDict()


class _Call:
    """A hub's method for one endpoint's limiter: `.remote(*args)` names the endpoint."""

    def __init__(self, method: Any, key: str):
        self.method, self.key = method, key

    def remote(self, *args: Any) -> Any:
        return self.method.remote(self.key, *args)


class _Endpoint:
    """One endpoint's limiter, in the run's hub: `acquire` and `release` as an
    `EndpointLimiter` actor's would be."""

    def __init__(self, hub: Any, key: str):
        self.acquire = _Call(hub.acquire, key)
        self.release = _Call(hub.release, key)


def _who() -> tuple[str, str, Any]:
    """(this process's node, this worker's id, its actor's handle): whose permits these are, and
    whom the hub watches for its death."""
    import ray

    ctx = ray.get_runtime_context()
    return str(ctx.get_node_id()), str(ctx.get_worker_id()), ctx.current_actor


class ClusterLimiter(Resource):
    """A model client's slots in a Ray worker: each slot is a permit of its endpoint's
    `EndpointLimiter`, so the endpoint's concurrency holds across the cluster (the hub's actor
    is looked up once per worker process and run). Each permit names its node and worker, so
    the limiter drops it when either dies: the hub watches the worker's actor from its first
    request on (`RunHub.limiter`)."""

    def __init__(self, hub: Any, tag: str, client: LLMClient):
        super().__init__(client.limiter.name, client.limiter.capacity)
        self.hub, self.tag = hub, tag
        self.key, self.hold_s = endpoint_key(client), hold_s(client)

    async def _permits(self) -> _Permits:
        k = (self.tag, self.key)
        if k not in _LIMITERS:
            node, holder, me = _who()
            await self.hub.limiter.remote(self.key, self.capacity, self.hold_s, holder, me)
            _LIMITERS[k] = _Permits(_Endpoint(self.hub, self.key), node, holder)
            while len(_LIMITERS) > 64:  # runs long gone
                _LIMITERS.popitem(last=False)
        return _LIMITERS[k]

    async def _take(self) -> tuple[_Permits, str]:
        permits = await self._permits()
        return permits, await permits.take()

    def _give(self, held: tuple[_Permits, str]) -> None:
        permits, token = held
        permits.give(token)


def bind_clients(services: Any, hub: Any, tag: str) -> None:
    """Give every model client of a worker's services its endpoint's cluster-wide limiter."""
    for client in services.model_clients():
        client.limiter = ClusterLimiter(hub, tag, client)
