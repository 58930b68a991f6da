"""Server CPU time per sign-in request, by kind: what a flood's requests cost `math2 serve`.

CPU time (user + system of the server process, from /proc), not wall time: it moves little with
the machine's load, so two versions of the code can be compared on a busy machine (run the
script once per version, `PYTHONPATH` naming the code to serve). Each kind is sent `--n` times
from 32 client threads, each request from its own loopback address (no address's budget is
reached): the sign-in form (GET), a wrong password on a name that is no account (401), an
attempt on a name whose budget is spent (429; its 5 checked attempts are sent first and not
counted), a POST with a wrong CSRF token (403: the framework's own cost), and the signed-in
reviewer's `/review` for scale (a retried request's first try counts in the CPU). Data:
`web_flood_42`'s synthetic store (10,000 pending texts).

    PYTHONPATH=src .venv/bin/python benchmarks/web_signin_cost.py [--n 600]
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).parent))
from web_flood import _client, _cpu, _csrf, serve, sign_in
from web_flood_42 import _seeded_store


def _per_request(server: psutil.Process, n: int, send: Callable[[int], int]) -> tuple[float, set]:
    """Server CPU ms per request over `n` requests sent from 32 threads, and their statuses (a
    kept-alive connection the server closed after its 5 s idle timeout is tried again once)."""

    def once_more(i: int) -> int:
        try:
            return send(i)
        except httpx.TransportError:
            return send(i)

    cpu0 = _cpu(server)
    with ThreadPoolExecutor(32) as pool:
        codes = set(pool.map(once_more, range(n)))
    return (_cpu(server) - cpu0) / n * 1000, codes


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="server CPU per sign-in request, by kind")
    ap.add_argument("--n", type=int, default=600, help="requests of each kind")
    args = ap.parse_args()
    n = args.n
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cost.db"
        _seeded_store(db, 10_000)
        proc, base = serve(db, Path(tmp) / "index")
        try:
            server = psutil.Process(proc.pid)
            addresses = [f"127.0.{3 + i // 200}.{10 + i % 200}" for i in range(n)]
            clients: list[tuple[httpx.Client, str]] = []
            for a in addresses:
                c = _client(base, a)
                clients.append((c, _csrf(c)))

            def post(i: int, name: str, token: str | None = None) -> int:
                c, csrf = clients[i]
                form = {"csrf_token": token or csrf, "username": name, "password": "nope nope"}
                return c.post("/login", data=form).status_code

            for i in range(5):  # alice's name budget, spent (hashed: not counted)
                post(i, "alice")
            with _client(base, "127.0.0.250") as bob:
                assert sign_in(bob, "bob")[0] == 303
                kinds: list[tuple[str, Callable[[int], int]]] = [
                    ("GET /login (the form)", lambda i: clients[i][0].get("/login").status_code),
                    ("POST, a name that is no account (401)", lambda i: post(i, f"guess-{i}")),
                    ("POST, a name whose budget is spent (429)", lambda i: post(i, "alice")),
                    ("POST, a wrong CSRF token (403)", lambda i: post(i, "alice", "x")),
                    ("GET /review, signed in (bob)", lambda i: bob.get("/review").status_code),
                ]
                rows = []
                for label, send in kinds:
                    load0 = os.getloadavg()[0]
                    count = n if "review" not in label else max(20, n // 10)
                    ms, codes = _per_request(server, count, send)
                    rows.append((label, count, ms, codes, load0, os.getloadavg()[0]))
            for c, _ in clients:
                c.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    print("| request | sent | server CPU ms per request | statuses | load avg |")
    print("|---|---:|---:|---|---|")
    for label, count, ms, codes, l0, l1 in rows:
        print(f"| {label} | {count} | {ms:.2f} | {sorted(codes)} | {l0:.1f} → {l1:.1f} |")


if __name__ == "__main__":
    main()
