"""One Lean REPL process over a pipe: framing, wall-clock timeouts, crash detection, restart."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import resource
import signal
from collections.abc import Sequence
from pathlib import Path

from math2.errors import Math2Error
from math2.lean.procmem import tree_rss
from math2.lean.protocol import Request, Response, encode, parse_response

log = logging.getLogger(__name__)

# A REPL answer can be large (all tactics, info trees): let one line be up to 256 MiB.
_LINE_LIMIT = 256 * 2**20


class LeanProcessError(Math2Error):
    """The REPL process failed; the process is gone (or killed) when this is raised."""

    def __init__(self, reason: str, stderr: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr


class LeanTimeout(LeanProcessError):
    """No answer within the wall-clock limit; the whole process group was killed."""


class LeanCrash(LeanProcessError):
    """The process died: stack overflow, out of memory, a signal, or an exit."""


class LeanProtocolError(LeanProcessError):
    """The process answered with something that is not a REPL frame."""


def crash_reason(returncode: int | None, stderr: str, memory_limit_mb: int | None) -> str:
    low = stderr.lower()
    if "stack overflow" in low:
        return "stack overflow"
    if "out of memory" in low or "std::bad_alloc" in low or "cannot allocate memory" in low:
        return "out of memory"
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
        if memory_limit_mb and -returncode in (signal.SIGSEGV, signal.SIGABRT, signal.SIGKILL):
            return f"killed by {name or -returncode} (likely out of memory under RLIMIT_AS)"
        return f"killed by signal {name or -returncode}"
    if returncode is not None:
        if not stderr.strip() and memory_limit_mb:
            return f"exited with code {returncode} and no output (likely out of memory)"
        return f"exited with code {returncode}"
    return "closed its output"


class ReplProcess:
    """A REPL child process. One request at a time; `send` raises LeanProcessError subclasses."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        memory_limit_mb: int | None = None,
        name: str = "repl",
    ):
        self.argv = list(argv)
        self.cwd = str(cwd) if cwd else None
        self.env = env
        self.memory_limit_mb = memory_limit_mb
        self.name = name
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._stderr_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.requests = 0

    @property
    def alive(self) -> bool:
        """Whether the process is running."""
        return self._proc is not None and self._proc.returncode is None

    @property
    def pid(self) -> int | None:
        """The process id (also its process-group id)."""
        return self._proc.pid if self._proc else None

    def _limit(self) -> None:  # runs in the child, before exec
        if self.memory_limit_mb:
            size = self.memory_limit_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    async def start(self) -> None:
        """Start the process (its own session, so that a kill takes every child with it)."""
        if self.alive:
            return
        self._stderr.clear()
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
            preexec_fn=self._limit if self.memory_limit_mb else None,
            limit=_LINE_LIMIT,
        )
        self._stderr_task = asyncio.create_task(self._drain_stderr(self._proc))
        self.requests = 0
        log.debug("%s started (pid %s)", self.name, self._proc.pid)

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        with contextlib.suppress(Exception):
            while line := await proc.stderr.readline():
                self._stderr.append(line.decode("utf-8", "replace"))

    def stderr_tail(self) -> str:
        """The last lines the process wrote to stderr."""
        return "".join(self._stderr)

    async def _read_frame(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        lines: list[bytes] = []
        while True:
            line = await self._proc.stdout.readline()
            if not line:
                raise EOFError
            if line.strip():
                lines.append(line)
            elif lines:
                return b"".join(lines).decode("utf-8", "replace")

    async def send(self, request: Request, timeout: float) -> Response:
        """Send one request and wait at most `timeout` seconds (wall clock) for its answer."""
        async with self._lock:
            if not self.alive:
                await self.start()
            assert self._proc is not None and self._proc.stdin is not None
            self.requests += 1
            try:
                self._proc.stdin.write(encode(request))
                await self._proc.stdin.drain()
                frame = await asyncio.wait_for(self._read_frame(), timeout)
            except TimeoutError:
                await self.kill()
                raise LeanTimeout(f"no answer within {timeout:g} s", self.stderr_tail()) from None
            except (EOFError, BrokenPipeError, ConnectionResetError):
                raise await self._crashed() from None
            try:
                return parse_response(json.loads(frame))
            except (json.JSONDecodeError, ValueError) as exc:
                await self.kill()
                raise LeanProtocolError(
                    f"not a REPL frame ({exc}): {frame[:200]!r}", self.stderr_tail()
                ) from None

    async def _crashed(self) -> LeanCrash:
        assert self._proc is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._proc.wait(), 5)
        if self._stderr_task:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 1)
        rc = self._proc.returncode
        await self.kill()
        stderr = self.stderr_tail()
        return LeanCrash(crash_reason(rc, stderr, self.memory_limit_mb), stderr)

    async def kill(self) -> None:
        """Kill the whole process group and reap the process."""
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 10)
        if self._stderr_task:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stderr_task
            self._stderr_task = None
        for stream in (proc.stdin,):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
        self._proc = None

    async def restart(self) -> None:
        """Kill and start again."""
        await self.kill()
        await self.start()

    def rss_bytes(self) -> int:
        """Resident memory of the process and all its descendants (`procmem.tree_rss`)."""
        if not self.alive or self.pid is None:
            return 0
        return tree_rss(self.pid)

    async def close(self) -> None:
        """Stop the process (kill: the REPL has no graceful shutdown worth waiting for)."""
        await self.kill()
