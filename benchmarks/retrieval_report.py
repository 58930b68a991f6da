"""The breakdowns and timings `benchmarks/retrieval.py` prints beside its per-set table.

- Every figure per **query style** (a set's name less its `users-` prefix: the issue-24 set
  `lean` and the issue-33 set `users-lean` are one style) and per **target kind** (theorem,
  structure, class, def, instance, inductive: recorded by the issue-33 sets, read from the store
  for the others, `check_devsets.kind_of`), each over the new sets (`users-*`), the old written
  sets with the titles, and the held-out docstrings apart; beside each kind table, the mean
  weighted by the held-out benchmark's mix of kinds (issue 33).
- p50/p95 of the command line's own call, `Searcher.search` over a fresh `Searcher` (no store,
  the index's names not preloaded: what `math2 search` does), at k = 10 and k = 100, wall and
  CPU time per call.
- The run's load average and CPU time beside its wall time.
"""

from __future__ import annotations

import math
import os
import resource
import statistics
import time
from collections import defaultdict
from pathlib import Path

from check_devsets import TARGET_KINDS

from math2.retrieval import Searcher
from math2.util.heap import keep_freed_blocks

METRICS = ("nDCG@10", "R@10", "R@50", "MRR")
# The held-out benchmark's targets by kind (issue 33): the weights of the "held-out mix" rows.
HELD_OUT_MIX = {
    "theorem": 0.37, "structure": 0.20, "class": 0.15, "def": 0.14, "instance": 0.12,
    "inductive": 0.03,
}  # fmt: skip
Scores = dict[str, list[dict[str, float]]]  # set → one metric dict per item


def score(names: list[str], rel: set[str]) -> dict[str, float]:
    """nDCG@10, Recall@10, Recall@50 and reciprocal rank of one ranked list (binary relevance)."""
    dcg = sum(1 / math.log2(i + 2) for i, n in enumerate(names[:10]) if n in rel)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    first = next((i for i, n in enumerate(names) if n in rel), None)
    return {
        "nDCG@10": dcg / idcg,
        "R@10": len(rel & set(names[:10])) / len(rel),
        "R@50": len(rel & set(names[:50])) / len(rel),
        "MRR": 1 / (first + 1) if first is not None else 0.0,
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {m: sum(r[m] for r in rows) / max(1, len(rows)) for m in METRICS}


def style(set_name: str) -> str:
    return set_name.removeprefix("users-")


def group(set_name: str) -> str:
    if set_name.startswith("users-"):
        return "new"
    return set_name if set_name in ("docstrings", "premises") else "old"


def breakdown(scores: Scores, kinds: dict[str, list[str]]) -> dict[tuple[str, str, str], list]:
    """(table, key, sets) → the items' metric dicts: table `style` keyed by style over new, old
    and all sets; table `kind` keyed by target kind over new, old and docstring sets."""
    out: dict[tuple[str, str, str], list] = defaultdict(list)
    for set_name, rows in scores.items():
        g = group(set_name)
        for row, kind in zip(rows, kinds[set_name], strict=True):
            out[("style", style(set_name), g)].append(row)
            if g in ("new", "old"):
                out[("style", style(set_name), "all")].append(row)
            out[("kind", kind, g)].append(row)
    return out


_STYLES = ("titles", "lean", "latex", "natural", "slogans", "nicknames", "special")
_SETS = ("new", "old", "all", "docstrings", "premises")


def _order(cell: tuple[tuple[str, str, str], list]) -> tuple[int, int, str, int]:
    """Styles before kinds; styles and kinds in their usual order, then new, old, all sets."""
    (table, key, sets), _ = cell
    keys = _STYLES if table == "style" else TARGET_KINDS
    rank = keys.index(key) if key in keys else len(keys)
    return (table != "style", rank, key, _SETS.index(sets) if sets in _SETS else len(_SETS))


def held_out_mix(cells: dict[tuple[str, str, str], list], sets: str) -> float | None:
    """nDCG@10 over `sets` weighted by the held-out benchmark's mix of kinds (renormalised
    over the kinds those sets hold)."""
    parts = {k: mean(cells[("kind", k, sets)])["nDCG@10"] for k in HELD_OUT_MIX
             if cells.get(("kind", k, sets))}  # fmt: skip
    weight = sum(HELD_OUT_MIX[k] for k in parts)
    return sum(HELD_OUT_MIX[k] * v for k, v in parts.items()) / weight if weight else None


def print_breakdowns(label: str, scores: Scores, kinds: dict, baseline: dict) -> None:
    """Rows of the style and kind tables for one configuration (ratios to `baseline`, filled
    by the first configuration printed)."""
    cells = breakdown(scores, kinds)
    for (table, key, sets), rows in sorted(cells.items(), key=_order):
        m = mean(rows)
        base = baseline.setdefault((table, key, sets), m["nDCG@10"])
        ratio = m["nDCG@10"] / base if base else float("nan")
        print(f"| {table} | {label} | {key} | {sets} | {len(rows)} | {m['nDCG@10']:.3f} "
              f"({ratio:.2f}) | {m['R@10']:.3f} | {m['R@50']:.3f} | {m['MRR']:.3f} |")  # fmt: skip
    for sets in ("new", "old"):
        v = held_out_mix(cells, sets)
        if v is not None:
            base = baseline.setdefault(("mix", sets), v)
            print(f"| kind | {label} | held-out mix | {sets} | | {v:.3f} ({v / base:.2f}) "
                  "| | | |")  # fmt: skip


def cli_latency(root: Path, library: str, queries: list[str], k: int) -> dict[str, float]:
    """Wall and CPU milliseconds of `Searcher(root).search(q, library, k)` per query: a fresh
    Searcher without a store, as `math2 search` makes one (one query first opens the parts),
    in a process that keeps freed blocks as `math2 search`'s does (`util/heap.py`)."""
    keep_freed_blocks()
    searcher = Searcher(root)
    searcher.search(queries[0], library, k)
    wall, cpu = [], []
    for q in queries:
        t0, c0 = time.perf_counter(), time.process_time()
        searcher.search(q, library, k)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return {
        "wall p50": statistics.median(wall), "wall p95": _p95(wall),
        "cpu p50": statistics.median(cpu), "cpu p95": _p95(cpu), "cpu mean": statistics.fmean(cpu),
    }  # fmt: skip


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[int(0.95 * (len(xs) - 1))]


class RunClock:
    """Wall time, this process's CPU time (user + system) and the load average of a run."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.load0 = os.getloadavg()

    def summary(self) -> str:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        load = os.getloadavg()
        return (
            f"run: wall {time.perf_counter() - self.t0:.0f} s, CPU "
            f"{ru.ru_utime + ru.ru_stime:.0f} s (user + system of this process), load average "
            f"at the start "
            f"{'/'.join(f'{x:.1f}' for x in self.load0)}, at the end "
            f"{'/'.join(f'{x:.1f}' for x in load)} (1/5/15 min), {os.cpu_count()} CPUs"
        )
