"""The fake server as a separate process, so the client under test can be killed and restarted
while the server keeps counting.

    with spawn_fake_server(script, tmp_path) as proc:
        ...  # point MATH2_LLM__BASE_URL at proc.base_url, run and kill the client
        assert not proc.repeats()
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from math2.llm.testing.request_log import read_log, repeats
from math2.llm.testing.script import Script


class FakeServerProcess:
    """A running `python -m math2.llm.testing.fake_server`, with its request log."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log_path: Path):
        self.proc = proc
        self.port = port
        self.log_path = log_path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict[str, Any]]:
        """Every chat request received so far, in order (read from the log)."""
        return read_log(self.log_path) if self.log_path.exists() else []

    def repeats(self) -> dict[str, int]:
        """Request hashes answered more than once."""
        return repeats(self.requests())


@contextlib.contextmanager
def spawn_fake_server(
    script: Script, workdir: Path, *, timeout_s: float = 60.0
) -> Iterator[FakeServerProcess]:
    """Start the server on a free port in a child process; stop it on exit."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    script_path = workdir / "fake-script.json"
    script_path.write_text(script.model_dump_json(by_alias=True), encoding="utf-8")
    port_file, log_path = workdir / "fake-port", workdir / "fake-requests.jsonl"
    port_file.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "math2.llm.testing.fake_server", "--script", str(script_path)]
    cmd += ["--port-file", str(port_file), "--log", str(log_path)]
    errors = (workdir / "fake-server.err").open("wb")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        deadline = time.monotonic() + timeout_s
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the fake server did not start (exit {proc.poll()}): "
                    + (workdir / "fake-server.err").read_text(errors="replace")[-2000:]
                )
            time.sleep(0.02)
        yield FakeServerProcess(proc, int(port_file.read_text()), log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errors.close()
