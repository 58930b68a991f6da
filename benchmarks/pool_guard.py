"""The REPL memory guard's reading, once a Lean check (`lean.pool.tree_rss_bytes`), against
psutil's recursive children (`ReplProcess.rss_bytes`, what the guard read before): CPU per
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

from math2.lean.pool import PoolConfig, ReplPool, tree_rss_bytes


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
            for name, read in (("psutil", proc.rss_bytes), ("/proc", lambda: tree_rss_bytes(proc))):
                t0 = time.process_time()
                for _ in range(a.readings):
                    value = read()
                cpu = (time.process_time() - t0) / a.readings
                print(f"{name}: {cpu * 1000:.3f} ms of CPU a reading ({value / 2**20:.0f} MiB), "
                      f"{procs} processes, load {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
