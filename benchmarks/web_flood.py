"""Sign-in floods against `math2 serve`, and what the reviewers see meanwhile.

`math2 serve` runs in its own process on 127.0.0.1 (as a user runs it: no proxy trusted).
Attackers connect from their own loopback addresses (127.0.0.x, one socket source address
each) and try a wrong password on a new name each time, as fast as the server answers (the
worst case: no name's delay slows them). Meanwhile another reviewer, signed in before from
127.0.0.250, loads the review queue and a node page in a loop, and a reviewer who has signed in
from 127.0.0.251 before signs in again a second into the flood.

Scenarios: no flood (the baseline), one address (300 tries), 30 addresses × 10 tries, and one
address sending a new `X-Forwarded-For` with each of 300 tries (spoofed); then the 30 addresses
again against the same app with the throttle as it was before issue 35 (every try hashed, one
hashing slot shared with the known reviewer), started with uvicorn directly. Reported per
scenario: the other reviewer's page loads (median, p95, share over 1 s), the known reviewer's
sign-in time, how many tries were checked (401) and refused before hashing (429), the server's
CPU time (user+sys, from /proc), this process's CPU time, and the load average.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

PASSWORD = "bench password"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _client(base: str, address: str) -> httpx.Client:
    return httpx.Client(
        base_url=base,
        transport=httpx.HTTPTransport(local_address=address),
        timeout=120,
        follow_redirects=False,
    )


def _csrf(c: httpx.Client) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]


def sign_in(c: httpx.Client, name: str) -> tuple[int, float]:
    """(status, seconds) of one sign-in, the form fetched first (not timed)."""
    form = {"csrf_token": _csrf(c), "username": name, "password": PASSWORD}
    t = time.perf_counter()
    code = c.post("/login", data=form).status_code
    return code, time.perf_counter() - t


@dataclass
class Scenario:
    name: str
    addresses: list[str]  # one attacker thread per address
    tries: int  # per address
    spoof: bool = False
    codes: list[int] = field(default_factory=list)


def _attack(base: str, sc: Scenario, address: str, stop: threading.Event) -> None:
    with _client(base, address) as c:
        token = _csrf(c)
        for n in range(sc.tries):
            if stop.is_set():
                return
            headers = {"x-forwarded-for": f"10.{n % 250}.{n // 250}.9"} if sc.spoof else {}
            form = {"csrf_token": token, "username": f"guess-{address}-{n}", "password": "nope"}
            sc.codes.append(c.post("/login", data=form, headers=headers).status_code)


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def _pct(times: list[float], q: float) -> float:
    times = sorted(times)
    return times[min(len(times) - 1, int(q * len(times)))]


def run_scenario(base: str, server: psutil.Process, sc: Scenario, pages: list[str]) -> dict:
    """One scenario; the reviewers' clients connect from .250 (pages) and .251 (sign-in)."""
    me = psutil.Process()
    stop = threading.Event()
    loads: list[float] = []
    with _client(base, "127.0.0.250") as reader:
        assert sign_in(reader, "bob")[0] == 303, "bob cannot sign in"
        for p in pages:
            reader.get(p)  # warm
        server_cpu, my_cpu, load0 = _cpu(server), _cpu(me), os.getloadavg()[0]
        t0 = time.perf_counter()
        attackers = [
            threading.Thread(target=_attack, args=(base, sc, a, stop)) for a in sc.addresses
        ]
        for t in attackers:
            t.start()
        signed_in: list[float] = []

        def known_reviewer() -> None:
            time.sleep(1.0)
            with _client(base, "127.0.0.251") as alice:
                code, took = sign_in(alice, "alice")
                assert code == 303, f"the known reviewer got {code}"
                signed_in.append(took)

        alice = threading.Thread(target=known_reviewer)
        alice.start()
        i = 0
        while (
            any(t.is_alive() for t in attackers) or alice.is_alive() or len(loads) < 40
        ) and time.perf_counter() - t0 < 300:
            t = time.perf_counter()
            r = reader.get(pages[i % len(pages)])
            loads.append(time.perf_counter() - t)
            assert r.status_code == 200, (pages[i % len(pages)], r.status_code)
            i += 1
        wall = time.perf_counter() - t0
        stop.set()
        for t in [*attackers, alice]:
            t.join(60)
    return {
        "scenario": sc.name,
        "tries": len(sc.codes),
        "checked": sc.codes.count(401),
        "refused": sc.codes.count(429),
        "other": len(sc.codes) - sc.codes.count(401) - sc.codes.count(429),
        "loads": len(loads),
        "median_ms": statistics.median(loads) * 1000,
        "p95_ms": _pct(loads, 0.95) * 1000,
        "over_1s": sum(x > 1 for x in loads) / len(loads),
        "sign_in_s": signed_in[0] if signed_in else float("nan"),
        "wall_s": wall,
        "server_cpu_s": _cpu(server) - server_cpu,
        "bench_cpu_s": _cpu(me) - my_cpu,
        "load": (load0, os.getloadavg()[0]),
    }


# The same app with the sign-in throttle as it was before issue 35: no shared cap for new
# addresses, and one hashing slot for everyone (known addresses queue behind the flood).
UNCAPPED = """
import sys, uvicorn
from math2.store import open_store
from math2.web import create_app
from math2.web.throttle import LoginThrottle

class Uncapped(LoginThrottle):
    async def run_hash(self, known, fn, *args):
        return await super().run_hash(False, fn, *args)

throttle = Uncapped(address_burst=10**9, name_burst=10**9)
app = create_app(open_store(sys.argv[1]), sys.argv[2], login_throttle=throttle)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[3]), log_level="warning",
            proxy_headers=False)
"""


def serve(db: Path, index_dir: Path, uncapped: bool = False) -> tuple[subprocess.Popen, str]:
    """`math2 serve` (or, `uncapped`, the app with the throttle of before issue 35) on a free
    port of 127.0.0.1, in its own process group."""
    port = _free_port()
    cmd = [sys.executable, "-m", "math2", "--db", str(db), "serve", "--port", str(port)]
    if uncapped:
        cmd = [sys.executable, "-c", UNCAPPED, str(db), str(index_dir), str(port)]
    env = {**os.environ, "MATH2_RETRIEVAL__INDEX_DIR": str(index_dir)}
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/login", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGTERM)
    raise SystemExit("math2 serve did not start")


SCENARIOS = [
    Scenario("no flood", [], 0),
    Scenario("one address", ["127.0.0.10"], 300),
    Scenario("30 addresses", [f"127.0.1.{i + 1}" for i in range(30)], 10),
    Scenario("spoofed X-Forwarded-For", ["127.0.0.11"], 300, spoof=True),
]


def floods(db: Path, index_dir: Path, pages: list[str]) -> list[dict]:
    """Every scenario against one `math2 serve`, then the 30-address flood against the throttle
    of before (no shared cap, one hashing slot); alice and bob must be reviewers of `db`."""
    rows = []
    for uncapped, scenarios in ((False, SCENARIOS), (True, SCENARIOS[2:3])):
        proc, base = serve(db, index_dir, uncapped)
        try:
            server = psutil.Process(proc.pid)
            with _client(base, "127.0.0.251") as alice:  # her address is known from now on
                assert sign_in(alice, "alice")[0] == 303
            for sc in scenarios:
                sc.codes = []
                row = run_scenario(base, server, sc, pages)
                if uncapped:
                    row["scenario"] += " (throttle before issue 35)"
                rows.append(row)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    return rows


def table(rows: list[dict]) -> str:
    """The scenarios as a Markdown table, with ratios against the no-flood row."""
    base = rows[0]
    out = [
        "| scenario | tries: checked / refused 429 | page loads | median ms | p95 ms "
        "(× no flood) | > 1 s | known reviewer's sign-in s | wall s | server CPU s | "
        "bench CPU s | load avg (start → end) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['scenario']} | {r['tries']}: {r['checked']} / {r['refused']} | {r['loads']} "
            f"| {r['median_ms']:.0f} | {r['p95_ms']:.0f} ({r['p95_ms'] / base['p95_ms']:.1f}×) "
            f"| {r['over_1s']:.1%} | {r['sign_in_s']:.2f} | {r['wall_s']:.1f} "
            f"| {r['server_cpu_s']:.1f} | {r['bench_cpu_s']:.1f} "
            f"| {r['load'][0]:.1f} → {r['load'][1]:.1f} |"
        )
    return "\n".join(out)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="sign-in floods against math2 serve")
    ap.add_argument("--store", type=Path, required=True, help="a store web_pages.py seeded")
    ap.add_argument("--index-dir", type=Path, default=Path(".math2/index"))
    ap.add_argument("--page", action="append", default=[], help="what bob loads (repeatable)")
    args = ap.parse_args()
    print(table(floods(args.store, args.index_dir, args.page or ["/review"])))


if __name__ == "__main__":
    main()
