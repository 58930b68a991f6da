"""The REPL memory guard's reading, once a Lean check (`ReplProcess.rss_bytes`: `/proc`, by
`lean.procmem.tree_rss`), against psutil's recursive children (`procmem.psutil_tree_rss`, what
the guard read before): CPU per
reading of a live fake REPL started two shells down, with the machine's process count.

    python benchmarks/pool_guard.py [--readings 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from math2.lean.pool import PoolConfig, ReplPool
from math2.lean.procmem import psutil_tree_rss


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--readings", type=int, default=500)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        inner = f"{sys.executable} -m math2.lean.testing.fake_repl"
        for i in range(2):  # the REPL two shells down, as under `lake env repl` and a wrapper
            script = Path(d) / f"level{i}.sh"
            script.write_text(f"#!/bin/sh\n{inner}\nexit $?\n")
            inner = f"/bin/sh {script}"
        async with ReplPool(PoolConfig(argv=inner.split(), size=1)) as pool:
            await pool.run("import Mathlib", "def a := 1")
            proc = pool._workers[0].proc
            procs = sum(1 for n in os.listdir("/proc") if n.isdigit())
            pid = proc.pid
            assert pid is not None
            for name, read in (("psutil", lambda: psutil_tree_rss(pid)), ("/proc", proc.rss_bytes)):
                t0 = time.process_time()
                for _ in range(a.readings):
                    value = read()
                cpu = (time.process_time() - t0) / a.readings
                print(f"{name}: {cpu * 1000:.3f} ms of CPU a reading ({value / 2**20:.0f} MiB), "
                      f"{procs} processes, load {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
