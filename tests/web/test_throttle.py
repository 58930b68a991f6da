"""Sign-in under attack: a flood cannot close sign-in to the team.

Over real sockets, attackers from forty loopback addresses try wrong passwords (on new names and
on alice's) while a reviewer who signed in from her address before and a reviewer on a new
address sign in. The budgets' rules are also tried alone, on a clock the test moves, on SQLite
and PostgreSQL: kept across a restart, shared by two stores over one database, exact when
threads race for the last attempts."""

from __future__ import annotations

import re
import threading
import time

import httpx
import pytest

from math2.store import Store
from math2.web import add_reviewer, create_app
from math2.web.throttle import Admission, LoginThrottle, refusal
from tests.web.conftest import PASSWORD, client_from, serving

ATTACKERS = 40
TRIES = 12  # past the budget of an address (10 attempts)


def _csrf(c: httpx.Client) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]


def _sign_in(c: httpx.Client, name: str = "alice") -> int:
    form = {"csrf_token": _csrf(c), "username": name, "password": PASSWORD}
    return c.post("/login", data=form, follow_redirects=False).status_code


def _attack(base: str, i: int, codes: list[tuple[str, int]], stop: threading.Event) -> None:
    with client_from(base, f"127.0.{1 + i // 200}.{10 + i % 200}") as c:
        token = _csrf(c)
        for n in range(TRIES):
            if stop.is_set():
                return
            name = "alice" if n % 2 else f"guess-{i}-{n}"  # her name, and names of no one
            form = {"csrf_token": token, "username": name, "password": "nope nope"}
            codes.append((name, c.post("/login", data=form).status_code))


def _signs_in_within(base: str, address: str, name: str, seconds: float) -> float:
    """Sign-in attempts until one goes through (a 429 is tried again after a pause)."""
    t = time.perf_counter()
    with client_from(base, address) as c:
        while time.perf_counter() - t < seconds:
            code = _sign_in(c, name)
            if code == 303:
                assert c.get("/review").status_code == 200
                return time.perf_counter() - t
            assert code == 429, code
            time.sleep(0.2)
    pytest.fail(f"{name} from {address} not signed in within {seconds} s")


def test_a_flood_from_many_addresses_keeps_neither_reviewer_out(web_store) -> None:
    store, _, index_dir = web_store
    add_reviewer(store, "bob", PASSWORD)
    app = create_app(store, index_dir, secret="s")
    with serving(app) as base:
        with client_from(base, "127.0.0.60") as alice:
            assert _sign_in(alice) == 303  # her address is known from now on
        codes: list[tuple[str, int]] = []
        stop = threading.Event()
        threads = [
            threading.Thread(target=_attack, args=(base, i, codes, stop)) for i in range(ATTACKERS)
        ]
        for t in threads:
            t.start()
        try:
            while len(codes) < 100 and any(t.is_alive() for t in threads):
                time.sleep(0.05)
            # alice's name is flooded: she gets in from her known address, bob from a new one
            alice_s = _signs_in_within(base, "127.0.0.60", "alice", 5.0)
            bob_s = _signs_in_within(base, "127.0.0.61", "bob", 5.0)
            during = len(codes)
        finally:
            stop.set()
            for t in threads:
                t.join(60)
    print(f"alice in after {alice_s:.2f} s, bob after {bob_s:.2f} s, {during} attempts by then")
    assert during >= 100
    assert {code for _, code in codes} <= {401, 429}
    on_alice = [code for name, code in codes if name == "alice"]
    # her name took no more than its budget of 5 wrong passwords from the many addresses (and
    # one more for each 30 s), whatever the number of addresses; the rest were refused
    assert on_alice.count(401) <= 5 + 1 and on_alice.count(429) >= len(on_alice) - 6


def _throttle(store: Store, now: list[float], **kw) -> LoginThrottle:
    return LoginThrottle(store=store, clock=lambda: now[0], **kw)


def test_one_address_cannot_go_on_guessing(store: Store) -> None:
    now = [1000.0]
    t = _throttle(store, now, address_burst=5, address_interval_s=10)
    for i in range(5):
        assert t.admit("evil", f"x{i}").wait == 0
    refused = t.admit("evil", "bob")
    assert refused.wait == 10 and "wait 10 s" in refused.why
    now[0] += 10
    assert t.admit("evil", "bob").wait == 0  # one attempt back after the interval


def test_a_flood_against_alice_leaves_bob_and_her_known_address(store: Store) -> None:
    now = [1000.0]
    t = _throttle(store, now, name_burst=3, name_interval_s=60)
    ok = t.admit("home", "alice")
    t.succeeded("home", "alice", ok)  # she signed in from home before
    waits = [t.admit(f"10.0.0.{i}", "alice").wait for i in range(10)]  # many addresses
    assert waits[:3] == [0, 0, 0] and all(w > 0 for w in waits[3:])
    refused = t.admit("10.9.9.9", "alice")  # alice from a new address waits…
    assert refused.wait > 0 and "address you signed in from before" in refused.why
    assert t.admit("10.9.9.9", "bob").wait == 0  # …bob does not
    known = t.admit("home", "alice")  # and from home she is checked at once
    assert known.wait == 0 and known.known and not known.took_name
    # a refused attempt cost the address nothing: it has all its attempts left but one (bob)
    for _ in range(t.address_burst - 1):
        assert t.admit("10.9.9.9", f"x{_}").wait == 0


def test_budgets_and_known_addresses_survive_a_restart_and_are_shared(store: Store) -> None:
    now = [1000.0]
    first = _throttle(store, now, name_burst=2)
    first.succeeded("home", "alice", first.admit("home", "alice"))
    assert first.admit("a1", "carol").wait == 0 and first.admit("a2", "carol").wait == 0
    # another process over the same database (a new Store), or this one after a restart
    other_store = Store(store.url)
    try:
        second = _throttle(other_store, now, name_burst=2)
        assert second.is_known("home", "alice")
        assert not second.is_known("home", "carol")
        assert second.admit("a3", "carol").wait > 0  # carol's budget was spent in the first
    finally:
        other_store.close()


def test_racing_attempts_take_exactly_the_budget(store: Store) -> None:
    now = [1000.0]
    stores = [store, Store(store.url)]  # two "processes"
    try:
        throttles = [_throttle(s, now, name_burst=5, name_interval_s=60) for s in stores]
        barrier = threading.Barrier(16)
        admitted: list[bool] = []

        def attempt(i: int) -> None:
            barrier.wait()
            admitted.append(throttles[i % 2].admit(f"10.0.{i}.1", "dave").wait == 0)

        threads = [threading.Thread(target=attempt, args=(i,)) for i in range(16)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    finally:
        stores[1].close()
    assert len(admitted) == 16 and admitted.count(True) == 5


def test_a_refusal_is_small_and_says_when() -> None:
    r = refusal(Admission(wait=12.3, why="Too many <sign-ins>"))
    assert r.status_code == 429 and r.headers["retry-after"] == "13"
    assert len(r.body) < 400 and b"Too many &lt;sign-ins&gt;" in r.body


def test_a_refused_attempt_writes_nothing(store: Store) -> None:
    """Refusals (of the address, of the name) are answered from one read: no statement that
    writes, no row for a new address; an admitted attempt still takes from both budgets."""
    from sqlalchemy import event, select

    from math2.store.models import SigninBudget

    now = [1000.0]
    t = _throttle(store, now, address_burst=2, name_burst=2)
    assert t.admit("a1", "erin").wait == 0 and t.admit("a2", "erin").wait == 0
    assert t.admit("a3", "x1").wait == 0 and t.admit("a3", "x2").wait == 0
    writes: list[str] = []

    def record(conn, cursor, statement, *args) -> None:
        if statement.lstrip().split()[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            writes.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        by_name = t.admit("a9", "erin")  # a new address, on a name whose budget is spent
        by_address = t.admit("a3", "x3")  # an address whose budget is spent
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert by_name.wait > 0 and "this name" in by_name.why
    assert by_address.wait > 0 and "your address" in by_address.why
    assert writes == []
    with store.session() as s:
        keys = set(s.scalars(select(SigninBudget.key)))
    assert keys == {"a:a1", "a:a2", "a:a3", "n:erin", "n:x1", "n:x2"}
    assert t.admit("a9", "x4").wait == 0  # the refused address kept its whole budget


def test_budget_trips_run_one_at_a_time_in_the_order_they_came() -> None:
    import anyio
    from anyio import wait_all_tasks_blocked
    from anyio.lowlevel import checkpoint

    t = LoginThrottle()
    release = threading.Event()
    running: list[int] = []
    order: list[int] = []
    most = [0]
    lock = threading.Lock()

    def trip(i: int) -> int:
        with lock:
            running.append(i)
            most[0] = max(most[0], len(running))
        if i == 0:
            release.wait(30)  # the first holds the slot while the others arrive
        with lock:
            running.remove(i)
            order.append(i)
        return i

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(t.run_admit, trip, i)
                await checkpoint()
                if i == 0:
                    while not running:
                        await anyio.sleep(0.01)
                else:
                    await wait_all_tasks_blocked()  # each queued before the next arrives
            release.set()

    anyio.run(main)
    assert order == list(range(8)) and most[0] == 1
