"""What the Ray benchmarks measure with: fresh PostgreSQL databases, CPU seconds of every
process of a run by role (psutil over this process's tree and PostgreSQL's), and a run's steady
rate. The fake model server stands for a model outside the cluster: its CPU is counted apart
(`model server (outside)`) and in no total."""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from dataclasses import dataclass

import psutil
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from math2.store import RunItem, Store

ROLES = ("driver", "workers", "hub (writer)", "lean actors", "repl", "ray system", "postgres")
LOCAL_ROLES = ("driver", "repl", "postgres")
OUTSIDE = "model server (outside)"


class Databases:
    def __init__(self, admin: str):
        self.admin = make_url(admin).set(drivername="postgresql+psycopg")
        self.engine = create_engine(self.admin, isolation_level="AUTOCOMMIT")
        self.names: list[str] = []

    def new(self) -> Store:
        name = f"math2_bench_{uuid.uuid4().hex[:10]}"
        with self.engine.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        self.names.append(name)
        store = Store(self.admin.set(database=name).render_as_string(hide_password=False))
        store.upgrade()
        return store

    def drop(self) -> None:
        with self.engine.connect() as c:
            for n in self.names:
                c.execute(text(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)'))


class CpuMeter:
    """CPU seconds (user + sys) of this process, its descendants (Ray's processes, the REPLs)
    and PostgreSQL's server, by role, over a span; sampled every `every` seconds so processes
    that end with the run (a run's actors) are counted up to their last sample."""

    def __init__(self, pg_port: int | None, every: float = 0.2):
        self.me, self.pg_port, self.every = os.getpid(), pg_port, every
        self.last: dict[int, tuple[str, float]] = {}
        self.base: dict[int, float] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._own = 0.0  # the sampler thread's own CPU, taken out of the driver's

    def _role(self, p: psutil.Process, pg: set[int]) -> str | None:
        """The process's role; None when it cannot be read (it ended: a zombie keeps its CPU
        times but not its command line)."""
        if p.pid == self.me:
            return "driver"
        if p.pid in pg:
            return "postgres"
        try:
            cmd = " ".join(p.cmdline()) or p.name()
        except psutil.Error:
            return None
        if "fake_repl" in cmd:
            return "repl"
        if "fake_server" in cmd:
            return OUTSIDE
        if cmd.startswith("ray::"):
            for key, role in (
                ("RunHub", "hub (writer)"),
                ("StoreWriter", "hub (writer)"),
                ("EndpointLimiter", "hub (writer)"),
                ("LeanActor", "lean actors"),
                ("Agent", "ray system"),
            ):
                if key in cmd:
                    return role
            return "workers"
        return "ray system"

    def _postgres(self) -> list[psutil.Process]:
        for p in psutil.process_iter(["name", "cmdline"]):
            cmd = p.info["cmdline"] or []
            if p.info["name"] == "postgres" and str(self.pg_port) in cmd:
                return [p, *p.children(recursive=True)]
        return []

    def sample(self) -> None:
        t0 = time.thread_time()
        me = psutil.Process(self.me)
        pg = self._postgres() if self.pg_port else []
        pgs = {p.pid for p in pg}
        for p in [me, *me.children(recursive=True), *pg]:
            try:
                t = p.cpu_times()
            except psutil.Error:
                continue
            with self._lock:
                old = self.last.get(p.pid)
                # an idle Ray worker is "ray::IDLE" until it runs an actor or a task
                keep = old is not None and old[0] not in ("workers", "ray system")
                role = old[0] if keep and old is not None else self._role(p, pgs)
                if role is None:  # ended since: its role is the one it was seen with
                    role = old[0] if old is not None else "ray system"
                self.last[p.pid] = (role, t.user + t.system)
        self._own += time.thread_time() - t0

    def __enter__(self) -> CpuMeter:
        self.last.clear()
        self._own = 0.0
        self.sample()
        self.base = {pid: c for pid, (_, c) in self.last.items()}
        self._own = 0.0
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()
        self.cpu = dict.fromkeys((*ROLES, OUTSIDE), 0.0)
        for pid, (role, c) in self.last.items():
            self.cpu[role] += c - self.base.get(pid, 0.0)
        self.cpu["driver"] -= self._own


@dataclass
class Run:
    """One run of a Ray benchmark: its size, wall time, steady rate, CPU by role, load."""

    kind: str
    n: int
    wall: float
    steady: float  # items/s between the 10th and 90th percentile of the finish times
    cpu: dict[str, float]
    load: float
    writes: int = 0  # Ray: the writes the run's one writer committed …
    commits: int = 0  # … in this many commits
    calls: int = 0  # … carried by this many calls of the workers to it

    def total(self) -> float:
        roles = LOCAL_ROLES if self.kind == "local" else ROLES
        return sum(self.cpu[r] for r in roles)


def steady_rate(store: Store, n: int) -> float:
    with store.session() as s:
        ts = sorted(t.timestamp() for t in s.scalars(select(RunItem.finished_at)))
    lo, hi = ts[int(0.1 * (n - 1))], ts[int(0.9 * (n - 1))]
    return (int(0.9 * (n - 1)) - int(0.1 * (n - 1))) / max(hi - lo, 1e-9)


def med(xs: list[float]) -> float:
    return statistics.median(xs)
