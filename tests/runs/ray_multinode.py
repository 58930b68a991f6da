"""A Ray cluster of several nodes started with Ray's own tools on this machine (`ray start --head`
and more `ray start --address`, loopback, one CPU each), under one temp dir with an auth token of
its own, for `test_ray_nodes.py`: its nodes' raylets can be found and SIGKILLed one at a time,
which is what Ray sees when a machine is lost.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")
# Small nodes: one CPU (the run's item worker reserves half), 1 GB of task memory, the smallest
# object store.
NODE = ["--num-cpus", "1", "--memory", str(10**9), "--object-store-memory", str(80 * 10**6)]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A head node and worker nodes started with `ray start`, all under one temp dir (so every
    process of it can be found, and only those are stopped: never `ray stop`, which would stop
    every Ray on the machine)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="m2r", dir="/tmp"))  # short: socket paths
        home = self.dir / "home"
        home.mkdir()
        # The cluster's own auth token, given to every process that joins it (nodes, drivers,
        # this test): a token another cluster left in this process's environment is not used.
        self.token = self.dir / "auth_token"
        self.token.write_text(secrets.token_hex(32))
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in _AUTH_VARS},
            "HOME": str(home),
            "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(self.token),
        }
        self.address = f"127.0.0.1:{_port()}"

    def _start(self, *args: str, env: dict[str, str] | None = None) -> None:
        argv = [str(RAY), "start", "--node-ip-address", "127.0.0.1", *NODE, *args]
        argv += ["--temp-dir", str(self.dir / "t"), "--dashboard-agent-listen-port", str(_port())]
        out = subprocess.run(
            argv, env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=180
        )
        if out.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}"
            )

    def start_head(self) -> None:
        port = self.address.rsplit(":", 1)[1]
        self._start(
            "--head",
            "--port",
            port,
            "--include-dashboard",
            "false",
            "--dashboard-port",
            str(_port()),
        )

    def add_node(self, env: dict[str, str] | None = None) -> None:
        """Another node; `env`: its own environment beside the cluster's (its workers and
        actors, and the REPLs they start, see it)."""
        self._start("--address", self.address, env=env)

    def driver_env(self) -> dict[str, str]:
        return dict(self.env)

    def _ours(self) -> list:
        import psutil

        me = os.getpid()
        found = []
        for p in psutil.process_iter(["cmdline"]):
            if p.pid != me and str(self.dir) in " ".join(p.info["cmdline"] or []):
                found.append(p)
        return found

    def raylet(self, node_id: str):
        """The raylet process of one node of this cluster."""
        for p in self._ours():
            cmd = p.info["cmdline"] or []
            if cmd and cmd[0].endswith("raylet") and f"--node_id={node_id}" in cmd:
                return p
        raise LookupError(f"no raylet for node {node_id}")

    def kill_node(self, node_id: str) -> None:
        """SIGKILL a node: its raylet and every process under it (its workers, its actors)."""
        raylet = self.raylet(node_id)
        for p in [*raylet.children(recursive=True), raylet]:
            with contextlib.suppress(Exception):
                p.send_signal(signal.SIGKILL)

    def stop(self) -> None:
        procs = self._ours()
        for p in list(procs):
            with contextlib.suppress(Exception):
                procs += p.children(recursive=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.send_signal(signal.SIGKILL)


_AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
