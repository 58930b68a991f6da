"""Issue 42's sign-in floods and queue sizes (the floods' helpers are `web_flood.py`'s).

No store needed: a synthetic one is seeded (`web_seed.py`). A burst from 200 addresses (3 tries
each, as fast as the server answers, every other one on alice's name) and a steady flood of 20
tries a second from 200 addresses for 30 s, against the no-flood baseline of the same `math2
serve`; for each, the signed-in reviewer's page loads (p50, p95), alice's sign-in from her known
address, carol's from a new address (tried again after each 429 until she is in), the server's
CPU time. The attackers run in a child process of their own (their 200 threads would otherwise
take this process's interpreter lock from the reviewers' clients, which real attackers do not:
`--attackers-in-process` runs them here, as the first runs did). Then `/review` in process at
10,000 and 100,000 pending agent texts: wall time and CPU per load, with the queue counts as
they are (capped) and as they were (a GROUP BY over the whole queue), in the same run.

    .venv/bin/python benchmarks/web_flood_42.py [--skip-floods] [--skip-review]
        [--attackers-in-process]
"""

from __future__ import annotations

import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).parent))
from web_flood import PASSWORD, _client, _cpu, _csrf, _pct, serve, sign_in

ADDRESSES_200 = [f"127.0.{2 + i // 200}.{10 + i % 200}" for i in range(200)]


def _until_in(base: str, address: str, name: str, t0: float, out: list[float]) -> None:
    """Sign in from `address` until it goes through (0.5 s between 429s); seconds since t0."""
    with _client(base, address) as c:
        while time.perf_counter() - t0 < 120:
            code, _ = sign_in(c, name)
            if code == 303:
                out.append(time.perf_counter() - t0)
                return
            assert code == 429, f"{name} got {code}"
            time.sleep(0.5)


def _post(c: httpx.Client, form: dict[str, str]) -> int:
    """One wrong sign-in: its status, or 0 when the connection dropped (a kept-alive socket
    the server closed after its 5 s idle timeout while the attacker thread waited for a core)."""
    try:
        return c.post("/login", data=form).status_code
    except httpx.TransportError:
        return 0


def _burst_attacker(base: str, address: str, codes: list[int], stop: threading.Event) -> None:
    with _client(base, address) as c:
        token = _csrf(c)
        for n in range(3):
            if stop.is_set():
                return
            name = "alice" if n % 2 else f"guess-{address}-{n}"
            form = {"csrf_token": token, "username": name, "password": "nope nope"}
            codes.append(_post(c, form))


def _steady(base: str, rate: float, seconds: float, codes: list[int], stop) -> None:
    """`rate` tries a second for `seconds`, each from the next of 200 addresses."""
    from concurrent.futures import ThreadPoolExecutor

    clients: dict[str, tuple[httpx.Client, str]] = {}
    lock = threading.Lock()

    def one(n: int) -> None:
        address = ADDRESSES_200[n % len(ADDRESSES_200)]
        with lock:
            pair = clients.get(address)
        if pair is None:
            c = _client(base, address)
            pair = (c, _csrf(c))
            with lock:
                clients[address] = pair
        c, token = pair
        name = "alice" if n % 2 else f"guess-{n}"
        form = {"csrf_token": token, "username": name, "password": "nope nope"}
        codes.append(_post(c, form))

    with ThreadPoolExecutor(32) as pool:
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < seconds and not stop.is_set():
            pool.submit(one, n)
            n += 1
            time.sleep(max(0.0, t0 + n / rate - time.perf_counter()))
    for c, _ in clients.values():
        c.close()


def _flood(base: str, kind: str, codes: list[int], stop: threading.Event) -> list[threading.Thread]:
    """The attackers' threads of a scenario (`none`, `burst`, `steady`), started."""
    if kind == "burst":
        flood = [
            threading.Thread(target=_burst_attacker, args=(base, a, codes, stop))
            for a in ADDRESSES_200
        ]
    elif kind == "steady":
        flood = [threading.Thread(target=_steady, args=(base, 20.0, 30.0, codes, stop))]
    else:
        flood = [threading.Thread(target=time.sleep, args=(10.0,))]
    for t in flood:
        t.start()
    return flood


def _flood_process(base: str, kind: str, out) -> None:
    """A scenario's attackers in a process of their own: their codes and CPU time to `out`."""
    codes: list[int] = []
    for t in _flood(base, kind, codes, threading.Event()):
        t.join()
    out.put((codes, _cpu(psutil.Process())))


class _ChildFlood:
    """The attackers in a child process (forked), so that their 200 threads do not take the
    interpreter's lock from the reviewers' clients in this one (real attackers run elsewhere)."""

    def __init__(self, base: str, kind: str) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self.out = ctx.Queue()
        self.proc = ctx.Process(target=_flood_process, args=(base, kind, self.out))
        self.proc.start()
        self.result: tuple[list[int], float] | None = None

    def is_alive(self) -> bool:
        return self.proc.is_alive() and self.result is None

    def join(self, timeout: float | None = None) -> None:
        if self.result is None:
            self.result = self.out.get(timeout=timeout)
        self.proc.join(timeout)


def flood_42(
    base: str, server: psutil.Process, kind: str, page: str = "/review", same_process=False
) -> dict:
    """One issue-42 scenario (`none`, `burst`, `steady`) against a running server; the
    attackers in a child process, or (`same_process`) in threads of this one as before."""
    me = psutil.Process()
    stop = threading.Event()
    codes: list[int] = []
    loads: list[float] = []
    alice_in: list[float] = []
    carol_in: list[float] = []
    carol_address = f"127.0.9.{int(time.time()) % 200 + 20}"  # new to the server every run
    with _client(base, "127.0.0.250") as reader:
        assert sign_in(reader, "bob")[0] == 303, "bob cannot sign in"
        reader.get(page)
        server_cpu, my_cpu, load0 = _cpu(server), _cpu(me), os.getloadavg()[0]
        t0 = time.perf_counter()
        flood: list = _flood(base, kind, codes, stop) if same_process else [_ChildFlood(base, kind)]

        def reviewers() -> None:
            time.sleep(1.0)
            both = [
                threading.Thread(target=_until_in, args=(base, "127.0.0.251", "alice", t0 + 1.0,
                                                         alice_in)),
                threading.Thread(target=_until_in, args=(base, carol_address, "carol", t0 + 1.0,
                                                         carol_in)),
            ]  # fmt: skip
            for t in both:
                t.start()
            for t in both:
                t.join()

        signing = threading.Thread(target=reviewers)
        signing.start()
        while (
            any(t.is_alive() for t in flood) or signing.is_alive() or len(loads) < 40
        ) and time.perf_counter() - t0 < 300:
            t = time.perf_counter()
            r = reader.get(page)
            loads.append(time.perf_counter() - t)
            assert r.status_code == 200, (page, r.status_code)
        wall = time.perf_counter() - t0
        stop.set()
        for t in [*flood, signing]:
            t.join(60)
    child_cpu = 0.0
    for f in flood:
        if isinstance(f, _ChildFlood) and f.result is not None:
            codes, child_cpu = f.result
    return {
        "scenario": kind,
        "tries": len(codes),
        "checked": codes.count(401),
        "refused": codes.count(429),
        "dropped": codes.count(0),
        "loads": len(loads),
        "p50_ms": statistics.median(loads) * 1000,
        "p95_ms": _pct(loads, 0.95) * 1000,
        "alice_s": alice_in[0] if alice_in else float("nan"),
        "carol_s": carol_in[0] if carol_in else float("nan"),
        "wall_s": wall,
        "server_cpu_s": _cpu(server) - server_cpu,
        "bench_cpu_s": _cpu(me) - my_cpu + child_cpu,
        "load": (load0, os.getloadavg()[0]),
    }


def table_42(rows: list[dict]) -> str:
    base = rows[0]
    out = [
        "| scenario | tries: checked / refused 429 / dropped | page loads | p50 ms "
        "| p95 ms (× no flood) "
        "| alice (known address) in, s | carol (new address) in, s | wall s | server CPU s "
        "| bench CPU s | load avg (start → end) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['scenario']} | {r['tries']}: {r['checked']} / {r['refused']} / {r['dropped']} "
            f"| {r['loads']} | {r['p50_ms']:.0f} "
            f"| {r['p95_ms']:.0f} ({r['p95_ms'] / base['p95_ms']:.1f}×) "
            f"| {r['alice_s']:.2f} | {r['carol_s']:.2f} | {r['wall_s']:.1f} "
            f"| {r['server_cpu_s']:.1f} | {r['bench_cpu_s']:.1f} "
            f"| {r['load'][0]:.1f} → {r['load'][1]:.1f} |"
        )
    return "\n".join(out)


def _seeded_store(db: Path, pending: int) -> None:
    from web_seed import seed_nodes, seed_queue

    from math2.store import open_store
    from math2.web import add_reviewer

    store = open_store(f"sqlite:///{db}", migrate=True)
    seed_nodes(store, 2000)
    seed_queue(store, pending, min(3000, pending // 10), 20)  # bindings: the AI library
    for name in ("alice", "bob", "carol", "bench"):
        add_reviewer(store, name, PASSWORD)
    store.close()


def _old_counts(s) -> dict[str, int]:
    """The queue counts before issue 42: one GROUP BY over every pending row."""
    from sqlalchemy import func, select

    from math2.store import AgentText, Binding
    from math2.web.queue import _OPEN, BINDING

    out = dict(
        s.execute(
            select(AgentText.kind, func.count())
            .where(AgentText.status == "pending")
            .group_by(AgentText.kind)
        ).all()
    )
    n = s.scalar(select(func.count()).select_from(Binding).where(Binding.status.in_(_OPEN)))
    if n:
        out[BINDING] = n
    return {k: int(v) for k, v in out.items()}


def review_cost(folder: Path, sizes: list[int], repeat: int) -> list[dict]:
    """GET /review in process at each queue size: p50 wall and CPU per load, capped counts and
    the old GROUP BY counts alternately in the same process."""
    from fastapi.testclient import TestClient

    from math2.store import open_store
    from math2.web import create_app, queue

    rows = []
    for size in sizes:
        db = folder / f"queue-{size}.db"
        _seeded_store(db, size)
        store = open_store(f"sqlite:///{db}")
        with TestClient(create_app(store, folder / "index", secret="s")) as c:
            token = _csrf(c)
            form = {"csrf_token": token, "username": "bench", "password": PASSWORD}
            c.post("/login", data=form)
            capped = queue.counts
            for label, fn in (("capped counts", capped), ("GROUP BY counts (before)", _old_counts)):
                queue.counts = fn
                c.get("/review")
                walls, cpus = [], []
                load0 = os.getloadavg()[0]
                for _ in range(repeat):
                    c0, w0 = time.process_time(), time.perf_counter()
                    assert c.get("/review").status_code == 200
                    cpus.append(time.process_time() - c0)
                    walls.append(time.perf_counter() - w0)
                rows.append(
                    {
                        "pending": size,
                        "counts": label,
                        "p50_ms": statistics.median(walls) * 1000,
                        "cpu_ms": statistics.median(cpus) * 1000,
                        "load": (load0, os.getloadavg()[0]),
                    }
                )
            queue.counts = capped
        store.close()
    return rows


def table_review(rows: list[dict]) -> str:
    out = [
        "| pending | counts | p50 ms | CPU ms per load (median) | load avg |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['pending']:,} | {r['counts']} | {r['p50_ms']:.1f} | {r['cpu_ms']:.1f} "
            f"| {r['load'][0]:.1f} → {r['load'][1]:.1f} |"
        )
    return "\n".join(out)


def main_42() -> None:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="issue 42: floods and the queue at 10k/100k")
    ap.add_argument("--pending", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--skip-floods", action="store_true")
    ap.add_argument("--skip-review", action="store_true")
    ap.add_argument(
        "--attackers-in-process",
        action="store_true",
        help="the attackers' threads in this process, beside the reviewers' clients (as before)",
    )
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_floods:
            db = folder / "flood.db"
            _seeded_store(db, 10_000)
            proc, base = serve(db, folder / "index")
            try:
                server = psutil.Process(proc.pid)
                with _client(base, "127.0.0.251") as alice:  # her address, known from now on
                    assert sign_in(alice, "alice")[0] == 303
                rows = [
                    flood_42(base, server, k, same_process=args.attackers_in_process)
                    for k in ("none", "burst", "steady")
                ]
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
            print(table_42(rows))
        if not args.skip_review:
            print(table_review(review_cost(folder, args.pending, args.repeat)))


if __name__ == "__main__":
    main_42()
