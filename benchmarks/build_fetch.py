"""The main job as a new user runs it, twice: without Mathlib (`math2 build --offline`) and with
Mathlib fetched at its pin through the build's own fetch path (from a local clone given as a
file:// URL, never the internet). Prints wall times and where the expected answer to
"fundamental theorem of algebra" ranks in each library's search.

    python benchmarks/build_fetch.py --mathlib-url file:///path/to/mathlib4 --workdir /tmp/bf
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

QUERY = "fundamental theorem of algebra"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "math2", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if res.returncode != 0:
        sys.exit(f"math2 {' '.join(args)} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    return time.perf_counter() - t0, res.stdout


def rank(stdout: str, name: str) -> int | None:
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].rstrip(".").isdigit() and parts[1] == name:
            return int(parts[0].rstrip("."))
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mathlib-url", required=True, help="git URL of a Mathlib repository")
    ap.add_argument("--workdir", type=Path, required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MATH2_")}
    for name, extra, build_args, checks in (
        ("without-mathlib", {}, ["build", "--offline"], [("setmm", "fta")]),
        (
            "with-mathlib",
            {"MATH2_DATA__MATHLIB_URL": a.mathlib_url},
            ["build"],
            [("mathlib", "Complex.exists_root"), ("setmm", "fta")],
        ),
    ):
        home = a.workdir / name
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        e = {**env, **extra}
        secs, _ = run(build_args, home, e)
        print(f"{name}: math2 {' '.join(build_args)}: {secs:.1f} s")
        secs, _ = run(build_args, home, e)
        print(f"{name}: again (nothing to do): {secs:.1f} s")
        for library, want in checks:
            _, out = run(["search", QUERY, "--library", library, "-k", "10"], home, e)
            print(f"{name}: search {library!r}: {want} at rank {rank(out, want) or '>10'}")


if __name__ == "__main__":
    main()
