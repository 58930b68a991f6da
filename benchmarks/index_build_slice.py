"""CPU and wall time of `build_index` over the first N declarations of a library in a store
(the lexical parts and the prior, no dense part), one process per run, so that two versions of
math2 can be compared on the same slice (run it once with each `PYTHONPATH`):

    PYTHONPATH=src python benchmarks/index_build_slice.py sqlite:////path/store.db 20000

Prints one JSON line: the version's source folder, N, the declarations indexed, CPU and wall
seconds, and the index's meta counts (descriptions, aids, functor bodies left out).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import math2
from math2.retrieval.index import build_index
from math2.store import Store


def main() -> None:
    url, n = sys.argv[1], int(sys.argv[2])
    library = sys.argv[3] if len(sys.argv) > 3 else "mathlib"
    store = Store(url)
    with tempfile.TemporaryDirectory() as tmp:
        c0, w0 = time.process_time(), time.perf_counter()
        meta = build_index(store, Path(tmp) / "ix", library, dense=False, limit=n)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(json.dumps({
        "math2": str(Path(math2.__file__).parent), "limit": n, "indexed": meta["count"],
        "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
        "descriptions": meta.get("descriptions"), "aids": meta.get("aids"),
        "functor_bodies_left_out": meta.get("functor_bodies_left_out"),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
