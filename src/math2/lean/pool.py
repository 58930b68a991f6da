"""A pool of REPL workers keyed by import header: pre-warmed, recycled, fair, with back-pressure.

Each worker loads its header (`import Mathlib`) once; every check then runs as a command in the
header's environment, so Mathlib is never re-imported per check. A worker is recycled after
`recycle_after_uses` checks or when its memory passes `recycle_above_mb`; a timeout or crash
kills it, and the next check that needs it starts a fresh one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from math2.lean.diagnostics import errors
from math2.lean.protocol import Command, CommandResponse, ReplError, Response
from math2.lean.repl import LeanCrash, LeanProcessError, LeanTimeout, ReplProcess

log = logging.getLogger(__name__)


class HeaderError(LeanProcessError):
    """The import header itself does not load (a wrong module name, a missing build)."""


@dataclass
class PoolConfig:
    """How many workers, how they start, and when they are recycled."""

    argv: Sequence[str]
    cwd: str | Path | None = None
    size: int = 2
    timeout_s: float = 60.0
    header_timeout_s: float = 600.0
    memory_limit_mb: int | None = 8192
    recycle_after_uses: int = 500
    recycle_above_mb: int | None = 6144
    max_pending: int = 1024
    env: dict[str, str] | None = None


@dataclass
class Worker:
    """A REPL process bound (once started) to one import header."""

    proc: ReplProcess
    header: str | None = None
    header_env: int | None = None
    uses: int = 0
    id: int = 0

    async def ensure(self, header: str, timeout: float) -> int:
        """Start the process and load `header` if it is not loaded yet; return its env id."""
        if self.proc.alive and self.header == header and self.header_env is not None:
            return self.header_env
        await self.proc.kill()
        self.header, self.header_env, self.uses = None, None, 0
        await self.proc.start()
        if not header.strip():
            self.header, self.header_env = header, None
            return -1
        resp = await self.proc.send(Command(cmd=header), timeout)
        if isinstance(resp, ReplError) or not isinstance(resp, CommandResponse) or errors(resp):
            await self.proc.kill()
            detail = (
                resp.message
                if isinstance(resp, ReplError)
                else "; ".join(d.message for d in errors(resp))
            )
            raise HeaderError(f"header {header!r} does not load: {detail}")
        self.header, self.header_env = header, resp.env
        return resp.env if resp.env is not None else -1


@dataclass
class PoolStats:
    """Counters for reports and benchmarks."""

    checks: int = 0
    timeouts: int = 0
    crashes: int = 0
    recycled_uses: int = 0
    recycled_memory: int = 0
    header_loads: int = 0
    wait_s: float = 0.0
    by_header: collections.Counter[str] = field(default_factory=collections.Counter)


class ReplPool:
    """`await pool.run(header, body)` sends `body` to a worker that has `header` loaded."""

    def __init__(self, config: PoolConfig):
        self.config = config
        self.stats = PoolStats()
        self._workers = [
            Worker(
                ReplProcess(
                    config.argv,
                    cwd=config.cwd,
                    env=config.env,
                    memory_limit_mb=config.memory_limit_mb,
                    name=f"repl-{i}",
                ),
                id=i,
            )
            for i in range(config.size)
        ]
        self._idle: collections.deque[Worker] = collections.deque(self._workers)
        self._waiters: collections.deque[tuple[str, asyncio.Future[Worker]]] = collections.deque()
        self._pending = asyncio.Semaphore(config.max_pending)
        self._closed = False

    async def start(self, headers: Sequence[str] = ("import Mathlib",)) -> None:
        """Pre-warm: load the headers across the workers before the first check."""
        jobs = []
        for i, worker in enumerate(self._workers):
            header = headers[i % len(headers)]
            jobs.append(self._warm(worker, header))
        await asyncio.gather(*jobs)

    async def _warm(self, worker: Worker, header: str) -> None:
        await worker.ensure(header, self.config.header_timeout_s)
        self.stats.header_loads += 1

    def _take_idle(self, header: str) -> Worker | None:
        for w in self._idle:
            if w.header == header and w.proc.alive:
                self._idle.remove(w)
                return w
        if self._idle:
            # Prefer a worker that holds no header, then the one used longest ago.
            for w in self._idle:
                if not w.proc.alive:
                    self._idle.remove(w)
                    return w
            return self._idle.popleft()
        return None

    async def _acquire(self, header: str) -> Worker:
        if not self._waiters:
            worker = self._take_idle(header)
            if worker is not None:
                return worker
        fut: asyncio.Future[Worker] = asyncio.get_running_loop().create_future()
        self._waiters.append((header, fut))
        try:
            return await fut
        except asyncio.CancelledError:
            with contextlib.suppress(ValueError):
                self._waiters.remove((header, fut))
            if fut.done() and not fut.cancelled():
                self._release(fut.result())
            raise

    def _release(self, worker: Worker) -> None:
        # First come, first served: the oldest waiter gets the worker, whatever its header.
        while self._waiters:
            _header, fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(worker)
                return
        self._idle.append(worker)

    async def _recycle_if_needed(self, worker: Worker) -> None:
        c = self.config
        if worker.uses >= c.recycle_after_uses:
            self.stats.recycled_uses += 1
            await worker.proc.kill()
        elif c.recycle_above_mb and worker.proc.rss_bytes() > c.recycle_above_mb * 2**20:
            self.stats.recycled_memory += 1
            log.info("recycling %s above %s MB", worker.proc.name, c.recycle_above_mb)
            await worker.proc.kill()

    async def run(self, header: str, body: str, timeout: float | None = None) -> Response:
        """Elaborate `body` in the environment of `header`; raise LeanProcessError on failure."""
        if self._closed:
            raise RuntimeError("pool is closed")
        timeout = timeout or self.config.timeout_s
        async with self._pending:
            t0 = time.monotonic()
            worker = await self._acquire(header)
            self.stats.wait_s += time.monotonic() - t0
            try:
                if not (worker.proc.alive and worker.header == header):
                    self.stats.header_loads += 1
                env = await worker.ensure(header, self.config.header_timeout_s)
                self.stats.checks += 1
                self.stats.by_header[header] += 1
                worker.uses += 1
                cmd = Command(cmd=body, env=None if env < 0 else env)
                try:
                    return await worker.proc.send(cmd, timeout)
                except LeanProcessError as exc:
                    if isinstance(exc, LeanCrash):
                        self.stats.crashes += 1
                    elif isinstance(exc, LeanTimeout):
                        self.stats.timeouts += 1
                    worker.header, worker.header_env = None, None
                    raise
            finally:
                with contextlib.suppress(Exception):
                    await self._recycle_if_needed(worker)
                self._release(worker)

    async def close(self) -> None:
        """Kill every worker."""
        self._closed = True
        await asyncio.gather(*(w.proc.close() for w in self._workers))
        for _, fut in self._waiters:
            if not fut.done():
                fut.cancel()

    async def __aenter__(self) -> ReplPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
