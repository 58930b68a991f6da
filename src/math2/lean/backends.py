"""Lean backends behind one interface: local REPL pool, Kimina Lean Server, `lake env lean`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import resource
import signal
import time
from pathlib import Path
from typing import Protocol

import httpx
from pydantic import BaseModel

from math2.lean.diagnostics import diagnostics
from math2.lean.identity import (
    VERSION_COMMAND,
    LeanIdentity,
    kind_of,
    mathlib_commit,
    version_from_output,
)
from math2.lean.pool import HeaderError, PoolConfig, ReplPool
from math2.lean.protocol import Command, CommandResponse, Message, Response, parse_response
from math2.lean.repl import (
    LeanCrash,
    LeanProcessError,
    LeanProtocolError,
    LeanTimeout,
    ReplProcess,
    crash_reason,
)


class RawOutcome(BaseModel):
    """What a backend got: a REPL-shaped response, or a failure with its kind."""

    response: Response | None = None
    failure: str | None = None  # timeout | crash | protocol | header | server
    detail: str = ""
    time_s: float = 0.0
    # Lines before the body in what the backend compiled (to map positions back to the body).
    line_offset: int = 0


class LeanBackend(Protocol):
    """Compiles `body` after the imports in `header`."""

    name: str

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        """Compile; never raises for Lean's or the process's failures, returns them."""
        ...

    async def identity(self, header: str) -> LeanIdentity:
        """Which Lean this is, as the backend reports it (asked once, at start)."""
        ...

    async def close(self) -> None:
        """Release processes and connections."""
        ...


def _version_answer(resp: Response | None) -> str | None:
    """The version string in the answer to `#eval Lean.versionString`."""
    if resp is None:
        return None
    for d in diagnostics(resp):
        if not d.is_error and d.message.strip():
            return version_from_output(d.message)
    return None


def _failure(exc: LeanProcessError, t0: float) -> RawOutcome:
    kind = (
        "timeout"
        if isinstance(exc, LeanTimeout)
        else "header"
        if isinstance(exc, HeaderError)
        else "protocol"
        if isinstance(exc, LeanProtocolError)
        else "crash"
        if isinstance(exc, LeanCrash)
        else "server"
    )
    return RawOutcome(failure=kind, detail=exc.reason, time_s=time.monotonic() - t0)


class ReplBackend:
    """The local pool of REPL processes."""

    name = "repl"

    def __init__(self, pool: ReplPool):
        self.pool = pool

    @classmethod
    def from_config(cls, config: PoolConfig) -> ReplBackend:
        """A backend with a new pool."""
        return cls(ReplPool(config))

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        """Run `body` in a worker that has `header` loaded."""
        t0 = time.monotonic()
        try:
            try:
                resp = await self.pool.run(header, body, timeout)
            except LeanCrash:
                # once more on a fresh process: a REPL killed from outside (its Ray actor going
                # down, the OOM killer for another's sake) says nothing of this statement; a
                # crash that repeats is the verdict
                resp = await self.pool.run(header, body, timeout)
        except LeanProcessError as exc:
            return _failure(exc, t0)
        return RawOutcome(response=resp, time_s=time.monotonic() - t0)

    async def identity(self, header: str) -> LeanIdentity:
        """Ask a fresh REPL (no imports) for `Lean.versionString`; Mathlib from the manifest."""
        c = self.pool.config
        proc = ReplProcess(
            c.argv, cwd=c.cwd, env=c.env, memory_limit_mb=c.memory_limit_mb, name="repl-probe"
        )
        version, note = None, ""
        try:
            await proc.start()
            version = _version_answer(await proc.send(Command(cmd=VERSION_COMMAND), 120))
        except (LeanProcessError, OSError) as exc:
            note = f"the REPL did not report its version: {exc}"
        finally:
            await proc.close()
        return LeanIdentity(
            kind=kind_of(self.name, version),
            lean_version=version,
            mathlib_commit=mathlib_commit(c.cwd),
            header=header,
            note=note,
        )

    async def close(self) -> None:
        """Stop the pool."""
        await self.pool.close()


class KiminaBackend:
    """A Kimina Lean Server (`POST /api/check` with snippets), over HTTP."""

    name = "kimina"

    def __init__(self, url: str, api_key: str | None = None, http_timeout: float = 3600):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(
            base_url=url.rstrip("/"), headers=headers, timeout=http_timeout
        )

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        """Send one snippet (header and body together; the server splits off the header)."""
        t0 = time.monotonic()
        code = f"{header}\n{body}" if header.strip() else body
        snippet_id = hashlib.sha256(code.encode()).hexdigest()[:16]
        payload = {
            "snippets": [{"id": snippet_id, "code": code}],
            "timeout": max(1, int(timeout)),
            "debug": False,
            "reuse": True,
        }
        try:
            r = await self.client.post("/api/check", json=payload)
            r.raise_for_status()
            data = r.json()
            result = data["results"][0]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            return RawOutcome(
                failure="server", detail=f"Kimina server: {exc}", time_s=time.monotonic() - t0
            )
        if result.get("error"):
            kind = "timeout" if "timed out" in result["error"] else "server"
            return RawOutcome(failure=kind, detail=result["error"], time_s=time.monotonic() - t0)
        try:
            resp = parse_response(result.get("response") or {})
        except ValueError as exc:
            return RawOutcome(failure="protocol", detail=str(exc), time_s=time.monotonic() - t0)
        return RawOutcome(response=resp, time_s=time.monotonic() - t0)

    async def identity(self, header: str) -> LeanIdentity:
        """Ask the server's Lean for `Lean.versionString`; it reports no Mathlib commit."""
        out = await self.run("", VERSION_COMMAND, 120)
        version = _version_answer(out.response)
        return LeanIdentity(
            kind=kind_of(self.name, version),
            lean_version=version,
            mathlib_commit=None,
            header=header,
            note="" if version else f"the server did not report its version: {out.detail}",
        )

    async def close(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()


class LakeBackend:
    """`lake env lean --json FILE` in a Lake project, one process per check."""

    name = "lake"

    def __init__(
        self,
        project_dir: str | Path,
        memory_limit_mb: int | None = 8192,
        lean_argv: list[str] | None = None,
        concurrency: int = 2,
    ):
        self.project_dir = Path(project_dir)
        self.memory_limit_mb = memory_limit_mb
        self.lean_argv = lean_argv or ["lake", "env", "lean", "--json"]
        self._sem = asyncio.Semaphore(concurrency)

    def _limit(self) -> None:
        if self.memory_limit_mb:
            size = self.memory_limit_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        """Write the file, compile it, parse the JSON messages."""
        t0 = time.monotonic()
        text = f"{header}\n{body}" if header.strip() else body
        offset = header.count("\n") + 1 if header.strip() else 0
        scratch = self.project_dir / ".math2-check"
        scratch.mkdir(exist_ok=True)
        path = scratch / f"Check{hashlib.sha256(text.encode()).hexdigest()[:16]}.lean"
        path.write_text(text, encoding="utf-8")
        async with self._sem:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *self.lean_argv,
                    str(path),
                    cwd=self.project_dir,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=self._limit if self.memory_limit_mb else None,
                )
            except FileNotFoundError as exc:
                return RawOutcome(failure="server", detail=f"cannot run {self.lean_argv[0]}: {exc}")
            try:
                out, err = await asyncio.wait_for(proc.communicate(), timeout)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
                return RawOutcome(
                    failure="timeout",
                    detail=f"no result within {timeout:g} s",
                    time_s=time.monotonic() - t0,
                )
            finally:
                with contextlib.suppress(OSError):
                    path.unlink()
        messages = []
        for line in out.decode("utf-8", "replace").splitlines():
            if not line.startswith("{"):
                continue
            with contextlib.suppress(json.JSONDecodeError, ValueError):
                messages.append(Message.model_validate(json.loads(line)))
        if proc.returncode != 0 and not any(m.severity == "error" for m in messages):
            # Lean exits 1 with its errors on stdout; anything else failed before checking.
            stderr = err.decode("utf-8", "replace")
            reason = crash_reason(proc.returncode, stderr, self.memory_limit_mb)
            tail = stderr.strip().splitlines()[-1:] or [""]
            return RawOutcome(
                failure="crash",
                detail=f"{reason}: {tail[0]}".rstrip(": "),
                time_s=time.monotonic() - t0,
            )
        return RawOutcome(
            response=CommandResponse(messages=messages),
            line_offset=offset,
            time_s=time.monotonic() - t0,
        )

    async def identity(self, header: str) -> LeanIdentity:
        """`lean --version` in the project; Mathlib from its `lake-manifest.json`."""
        argv = [a for a in self.lean_argv if a != "--json"] + ["--version"]
        version, note = None, ""
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.project_dir,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            version = version_from_output(out.decode("utf-8", "replace"))
        except (OSError, TimeoutError) as exc:
            note = f"`{' '.join(argv)}` failed: {exc}"
        return LeanIdentity(
            kind=kind_of(self.name, version),
            lean_version=version,
            mathlib_commit=mathlib_commit(self.project_dir),
            header=header,
            note=note,
        )

    async def close(self) -> None:
        """Nothing is kept between checks."""
