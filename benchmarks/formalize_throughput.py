"""Throughput and memory of the formalize loop: fake model over HTTP, fake Lean REPL.

    python benchmarks/formalize_throughput.py [--items 400] [--latency 1.0] [--concurrency 16]
        [--check-delay 0.25] [--workers 2] [--memory-items 10000]

Every item passes in round 1 with retrieval off, so it costs two model calls (generate, judge)
and one Lean check. The model's bound is C / (2 L) items/s, Lean's is W / D items/s; the streaming
run (`run_formalize` on `math2.runs`, attempts and caches written to SQLite) is compared with the
slower bound and with MathForm's stage-barrier batch mode (generate all → compile all → judge
all) over the same client, checker and fakes, measured in the same process. The barrier baseline
writes no attempts (an advantage to it). Memory: RSS of this process sampled over a long
streaming run with faster fakes must stay flat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path

import formalize_setup as setup
import psutil

from math2.config import Settings
from math2.lean import CheckItem, Mode
from math2.llm import load_template, make_client, structured
from math2.llm.testing import spawn_fake_server
from math2.roles.formalize import JudgeVerdict, extract_lean, run_formalize
from math2.services import make_checker
from math2.store import Store
from math2.store.aio import AsyncStore


def settings(db: Path, base_url: str, concurrency: int, workers: int, delay: float) -> Settings:
    return setup.settings(f"sqlite:///{db}", base_url, concurrency, workers, delay, db.parent, 0.2)


def store_at(db: Path) -> Store:
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    setup.add_fake_model(store)
    return store


async def streaming(st: Settings, store: Store, inp: Path, samples: list | None = None):
    """(items/s over the whole call, steady items/s from 10 % to 90 % done, seconds); RSS
    samples (done, MB) when asked."""
    proc = psutil.Process()
    marks: set[int] = set()
    ticks: list[tuple[float, int]] = []

    waits: dict[str, list[int]] = {}

    def on_progress(p) -> None:
        ticks.append((time.monotonic(), p.done))
        for name, r in p.resources.items():
            waits.setdefault(name, []).append(r.waiting)
        streaming.last = p
        if samples is not None and p.done // 500 not in marks:
            marks.add(p.done // 500)
            samples.append((p.done, proc.memory_info().rss / 2**20))
            print(f"  {p.done} done, RSS {samples[-1][1]:.0f} MB", flush=True)

    started = time.monotonic()
    summary = await run_formalize(st, store, inp, setup.options(), on_progress=on_progress)
    elapsed = time.monotonic() - started
    assert summary.failed == 0 and summary.done > 0, summary
    n = summary.done
    lo = next(t for t in ticks if t[1] >= n // 10)
    hi = [t for t in ticks if t[1] <= n * 9 // 10][-1]
    steady = (hi[1] - lo[1]) / (hi[0] - lo[0]) if hi[0] > lo[0] else float("nan")
    res = streaming.last.resources
    print(
        "  utilisation: "
        + ", ".join(
            f"{k} {r.utilisation:.0%} (mean queue {sum(waits[k]) / len(waits[k]):.1f})"
            for k, r in res.items()
        )
    )
    return n / elapsed, steady, elapsed


async def barrier(st: Settings, store: Store, n: int, tag: str):
    """MathForm's batch mode: every generation, then every check, then every judgement."""
    gen_t, judge_t = load_template("formalize/generate"), load_template("formalize/judge")
    astore = AsyncStore(store)
    client = make_client(st, "gen", astore)
    checker = make_checker(st, store)
    lean_slots = asyncio.Semaphore(st.lean.workers)
    statements = [f"item {tag}{i}: n + 0 = n." for i in range(n)]
    started = time.monotonic()
    replies = await asyncio.gather(
        *(
            client.chat(
                gen_t.render(statement=s, hits=[], previous=None, feedback="", round=1),
                temperature=0.7,
            )
            for s in statements
        )
    )
    codes = [extract_lean(r.content)[0] for r in replies]

    async def check(i: int, code: str):
        async with lean_slots:
            item = CheckItem(id=str(i), code=st.lean.header + "\n\n" + code, mode=Mode.STATEMENT)
            return await checker.check(item)

    checks = await asyncio.gather(*(check(i, c) for i, c in enumerate(codes)))
    verdicts = await asyncio.gather(
        *(
            structured(client, judge_t.render(statement=s, lean=c), JudgeVerdict, temperature=0.0)
            for s, c, r in zip(statements, codes, checks, strict=True)
            if r.passed
        )
    )
    elapsed = time.monotonic() - started
    assert all(v.ok and v.value.passed() for v in verdicts) and len(verdicts) == n
    await client.aclose()
    await checker.backend.close()
    await astore.aclose()
    return n / elapsed, elapsed


async def compare(a, tmp: Path, bound: float) -> None:
    """Streaming against the stage barrier, same fakes, same process."""
    with spawn_fake_server(setup.model_script(a.latency), tmp / "fake") as srv:
        inp = tmp / "stream.jsonl"
        setup.write_items(inp, a.items, "s")
        db = tmp / "stream.db"
        st = settings(db, srv.base_url, a.concurrency, a.workers, a.check_delay)
        rate, steady, secs = await streaming(st, store_at(db), inp)
        print(
            f"streaming: {a.items} items in {secs:.1f} s = {rate:.2f} items/s "
            f"= {rate / bound:.0%} of the slower bound (start-up included); steady state "
            f"(10-90 % done) {steady:.2f} items/s = {steady / bound:.0%}"
        )
        db = tmp / "barrier.db"
        st = settings(db, srv.base_url, a.concurrency, a.workers, a.check_delay)
        brate, bsecs = await barrier(st, store_at(db), a.items, "b")
        print(
            f"stage barrier: {a.items} items in {bsecs:.1f} s = {brate:.2f} items/s; "
            f"streaming is {rate / brate:.2f}x"
        )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--latency", type=float, default=1.0, help="model latency L (s)")
    ap.add_argument("--concurrency", type=int, default=16, help="model slots C")
    ap.add_argument("--check-delay", type=float, default=0.25, help="Lean time per check D (s)")
    ap.add_argument("--workers", type=int, default=2, help="Lean workers W")
    ap.add_argument("--memory-items", type=int, default=10_000)
    ap.add_argument("--tmp", default=None, help="where the stores go (default: the system's)")
    a = ap.parse_args()
    model_bound = a.concurrency / (2 * a.latency)
    lean_bound = a.workers / a.check_delay
    bound = min(model_bound, lean_bound)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; python {platform.python_version()}"
    )
    print(
        f"L={a.latency}s C={a.concurrency} D={a.check_delay}s W={a.workers}: model bound "
        f"{model_bound:.1f} items/s, Lean bound {lean_bound:.1f} items/s"
    )
    with tempfile.TemporaryDirectory(dir=a.tmp) as tmp:
        tmp = Path(tmp)
        if a.items:
            await compare(a, tmp, bound)
        if a.memory_items:
            with spawn_fake_server(setup.model_script(0.002), tmp / "fake-memory") as srv:
                inp = tmp / "memory.jsonl"
                setup.write_items(inp, a.memory_items, "m")
                db = tmp / "memory.db"
                st = settings(db, srv.base_url, 16, 2, 0.001)
                samples: list = []
                rate, _, secs = await streaming(st, store_at(db), inp, samples)
                print(f"memory run: {a.memory_items} items in {secs:.0f} s ({rate:.1f} items/s)")
                print(
                    "RSS (MB) by items done: "
                    + ", ".join(f"{d}: {mb:.0f}" for d, mb in samples[:: max(1, len(samples) // 8)])
                )
                first = next((mb for d, mb in samples if d >= a.memory_items // 10), samples[0][1])
                print(f"RSS growth from 10% to the end: {samples[-1][1] - first:+.1f} MB")


if __name__ == "__main__":
    asyncio.run(main())
