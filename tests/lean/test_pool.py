"""The pool: header loaded once per worker, recycling, fairness, back-pressure, failures."""

import asyncio
import os

import psutil
import pytest

from math2.lean.pool import HeaderError, PoolConfig, ReplPool
from math2.lean.procmem import psutil_tree_rss
from math2.lean.protocol import CommandResponse
from math2.lean.repl import LeanCrash, LeanTimeout
from tests.lean.conftest import fake_argv

H = "import Mathlib"


def config(*args: str, **kw) -> PoolConfig:
    base = dict(size=2, timeout_s=10, header_timeout_s=10, memory_limit_mb=2048)
    return PoolConfig(argv=fake_argv(*args), **{**base, **kw})


async def test_header_is_loaded_once_per_worker_and_checks_use_its_env() -> None:
    async with ReplPool(config("--header-delay", "0.3")) as pool:
        await pool.start([H])
        assert pool.stats.header_loads == 2
        results = await asyncio.gather(
            *(pool.run(H, f"theorem t{i} : True := sorry") for i in range(20))
        )
        assert all(isinstance(r, CommandResponse) and r.sorries for r in results)
        # never re-imported: counted, not timed (a test never asserts wall time)
        assert pool.stats.header_loads == 2


async def test_a_second_header_gets_its_own_worker() -> None:
    async with ReplPool(config(size=2)) as pool:
        await pool.start([H])
        await pool.run("import Mathlib.Data.Nat.Basic", "def x := 1")
        assert pool.stats.header_loads == 3
        assert pool.stats.by_header["import Mathlib.Data.Nat.Basic"] == 1


async def test_recycling_after_n_uses() -> None:
    async with ReplPool(config(size=1, recycle_after_uses=3)) as pool:
        pids = set()
        for i in range(7):
            await pool.run(H, f"def x{i} := {i}")
            pids.add(pool._workers[0].proc.pid)
        pids.discard(None)
        assert pool.stats.recycled_uses == 2
        assert len(pids) == 3


async def test_recycling_above_a_memory_threshold() -> None:
    async with ReplPool(config(size=1, recycle_above_mb=80)) as pool:
        await pool.run(H, "def a := 1")
        assert pool.stats.recycled_memory == 0
        await pool.run(H, "-- fake: alloc 120")
        assert pool.stats.recycled_memory == 1
        assert not pool._workers[0].proc.alive
        assert isinstance(await pool.run(H, "def b := 1"), CommandResponse)


async def test_timeout_then_the_next_check_succeeds() -> None:
    async with ReplPool(config(size=1)) as pool:
        with pytest.raises(LeanTimeout):
            await pool.run(H, "-- fake: hang", timeout=0.5)
        resp = await pool.run(H, "theorem t : True := sorry")
        assert isinstance(resp, CommandResponse) and resp.sorries
        assert pool.stats.timeouts == 1


async def test_crash_then_the_next_check_succeeds() -> None:
    async with ReplPool(config(size=1)) as pool:
        with pytest.raises(LeanCrash):
            await pool.run(H, "-- fake: crash")
        assert isinstance(await pool.run(H, "def b := 1"), CommandResponse)
        assert pool.stats.crashes == 1


async def test_header_that_does_not_load_is_a_header_error() -> None:
    async with ReplPool(config(size=1)) as pool:
        with pytest.raises(HeaderError, match="does not load"):
            await pool.run("import Mathlib\n-- fake: error unknown_constant Mathlib", "def a := 1")


async def test_first_come_first_served() -> None:
    async with ReplPool(config("--check-delay", "0.05", size=1)) as pool:
        order: list[int] = []

        async def job(i: int) -> None:
            await pool.run(H, f"def x{i} := 1")
            order.append(i)

        tasks = []
        for i in range(8):
            tasks.append(asyncio.create_task(job(i)))
            await asyncio.sleep(0.005)
        await asyncio.gather(*tasks)
        assert order == list(range(8))


async def test_back_pressure_bounds_what_is_in_flight() -> None:
    async with ReplPool(config("--check-delay", "0.05", size=1, max_pending=2)) as pool:
        peak_waiters = 0
        done = asyncio.Event()

        async def sample() -> None:
            nonlocal peak_waiters
            while not done.is_set():
                peak_waiters = max(peak_waiters, len(pool._waiters))
                await asyncio.sleep(0.005)

        sampler = asyncio.create_task(sample())
        await asyncio.gather(*(pool.run(H, f"def y{i} := 1") for i in range(8)))
        done.set()
        await sampler
        # size 1 + max_pending 2: one check runs, at most one waits; the rest block before.
        assert peak_waiters == 1
        assert pool.stats.checks == 8


async def test_cancelled_waiter_does_not_lose_the_worker() -> None:
    async with ReplPool(config("--check-delay", "0.2", size=1)) as pool:
        first = asyncio.create_task(pool.run(H, "def a := 1"))
        await asyncio.sleep(0.05)
        second = asyncio.create_task(pool.run(H, "def b := 1"))
        await asyncio.sleep(0.05)
        second.cancel()
        await first
        assert isinstance(await pool.run(H, "def c := 1"), CommandResponse)


async def test_a_repl_killed_from_outside_is_asked_again_a_repeated_crash_is_the_verdict() -> None:
    # the backend's rule: a crash once (the REPL killed by its actor's end, by the OOM killer for
    # another's sake) says nothing of the statement — asked again on a fresh process; a crash
    # that repeats is the verdict
    import os
    import signal

    from math2.lean.backends import ReplBackend

    backend = ReplBackend(ReplPool(config(size=1)))
    try:
        run = asyncio.create_task(backend.run(H, "theorem t : True := sorry -- fake: slow 1", 30))
        while backend.pool.stats.checks < 1:  # the header is loaded, the check sent
            await asyncio.sleep(0.01)
        pid = backend.pool._workers[0].proc.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        out = await run
        assert out.failure is None and out.response is not None and out.response.sorries
        assert backend.pool.stats.crashes == 1
        again = await backend.run(H, "-- fake: crash", 30)
        assert again.failure == "crash" and backend.pool.stats.crashes == 3
    finally:
        await backend.pool.close()


def _nested(tmp_path, depth: int) -> list[str]:
    """argv of the fake REPL started `depth` shells down (as `lake env repl` starts the REPL
    as a child, and a wrapper may add a level): no shell `exec`s, so each level stays a
    process."""
    inner = " ".join(fake_argv())
    for i in range(depth):
        script = tmp_path / f"level{i}.sh"
        script.write_text(f"#!/bin/sh\n{inner}\nexit $?\n")
        os.chmod(script, 0o755)
        inner = f"/bin/sh {script}"
    return inner.split()


async def test_a_grandchilds_memory_trips_the_guard(tmp_path) -> None:
    cfg = config(size=1, recycle_above_mb=80)
    cfg.argv = _nested(tmp_path, 2)
    async with ReplPool(cfg) as pool:
        await pool.run(H, "def a := 1")
        proc = pool._workers[0].proc
        top = psutil.Process(proc.pid)
        # the REPL itself (the process that allocates) is two levels below the pool's process
        below = [c for k in top.children() for c in k.children()]
        assert any("python" in " ".join(c.cmdline()) for c in below)
        assert not any("python" in " ".join(c.cmdline()) for c in top.children())
        assert pool.stats.recycled_memory == 0
        await pool.run(H, "-- fake: alloc 120")
        assert pool.stats.recycled_memory == 1
        assert not proc.alive


async def test_the_guards_reading_is_psutils(tmp_path) -> None:
    cfg = config(size=1)
    cfg.argv = _nested(tmp_path, 2)
    async with ReplPool(cfg) as pool:
        await pool.run(H, "-- fake: alloc 64")
        proc = pool._workers[0].proc
        fast, slow = proc.rss_bytes(), psutil_tree_rss(proc.pid)
        assert fast > 64 * 2**20
        assert abs(fast - slow) < 8 * 2**20


def test_a_bad_proc_entry_is_skipped_not_the_guard(monkeypatch) -> None:
    """A `/proc/PID/stat` line that does not parse (cut short, not a number) skips that entry:
    the rest of the tree is still read (raised, it would switch the memory guard off for the
    whole check)."""
    from math2.lean import procmem

    stats = {
        "1": b"1 (init) S 0 1 1",
        "2": b"2 (a (b) c) S 1 2 2",  # comm with spaces and parentheses
        "3": b"3 (cut) S",  # cut short: IndexError
        "4": b"4 (odd) S x 4 4",  # not a number: ValueError
        "5": b"5 (kid) S 2 5 5",
    }
    monkeypatch.setattr(procmem.os, "listdir", lambda path: [*stats, "self"])
    monkeypatch.setattr(procmem, "_read", lambda path: stats[path.split("/")[2]])
    assert sorted(procmem._proc_tree(1)) == [1, 2, 5]
