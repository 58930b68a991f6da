"""The tables `scale_ray.py` prints from its runs: CPU per item and the fixed CPU of a run by
role (local beside Ray), Ray's extra, the writer's calls, and throughput at k REPLs or Lean
pools."""

from __future__ import annotations

import argparse
from typing import Any

from ray_meter import LOCAL_ROLES, OUTSIDE, ROLES, Run, med


def print_report(
    a: argparse.Namespace,
    cpu_runs: dict[tuple[str, int], list[Run]],
    rows: list[tuple[int, list[Any]]],
) -> None:
    """Print the benchmark's tables (`a`: its arguments; `cpu_runs`: the CPU part's runs by
    executor and size; `rows`: the throughput part's (k, [(local, Ray)] pairs))."""
    if cpu_runs:
        print_cpu(a, cpu_runs)
    if rows:
        print_throughput(a, rows)


def print_cpu(a: argparse.Namespace, cpu_runs: dict[tuple[str, int], list[Run]]) -> None:
    """CPU per item and fixed CPU of a run by role, local beside Ray."""
    n = a.items
    what = (
        f"formalize items (model {a.model_latency * 1000:.0f} ms a call, {a.concurrency} slots)"
        if a.formalize
        else "one check an item"
    )
    print(
        f"\n## CPU per item ({what}, zero check latency, one REPL; runs of {n} and {3 * n} items)\n"
    )
    print("| | " + " | ".join(ROLES) + " | total | load |")
    print("|---|" + "---|" * (len(ROLES) + 2))
    per_item: dict[str, float] = {}
    fixed_runs: list[str] = []
    fixed_by_role: list[str] = []  # what a run of N costs beyond N × its per-item CPU, by role
    for kind in ("local", "ray"):
        small, big = cpu_runs[kind, n], cpu_runs[kind, 3 * n]
        roles = LOCAL_ROLES if kind == "local" else ROLES
        marg = {
            r: (med([x.cpu[r] for x in big]) - med([x.cpu[r] for x in small])) / (2 * n)
            for r in roles
        }
        total = (med([x.total() for x in big]) - med([x.total() for x in small])) / (2 * n)
        fixed = med([x.total() for x in small]) - n * total
        per_item[kind] = total
        loads = [x.load for x in small + big]
        cells = " | ".join(f"{marg[r] * 1000:.2f}" if r in marg else "–" for r in ROLES)
        print(
            f"| {kind}, ms/item | {cells} | **{total * 1000:.2f}** | "
            f"{min(loads):.1f}–{max(loads):.1f} |"
        )
        fixed_runs.append(f"{kind} {fixed:.2f} s")
        fixed_by_role.append(
            f"| {kind}, fixed s | "
            + " | ".join(
                f"{med([x.cpu[r] for x in small]) - n * marg[r]:.2f}" if r in marg else "–"
                for r in ROLES
            )
            + f" | **{fixed:.2f}** | |"
        )
    print("\n".join(fixed_by_role))
    print(f"\nFixed CPU of a run (starting and ending it): {', '.join(fixed_runs)}")
    if a.formalize:
        outside = [
            (
                med([x.cpu[OUTSIDE] for x in cpu_runs[k, 3 * n]])
                - med([x.cpu[OUTSIDE] for x in cpu_runs[k, n]])
            )
            / (2 * n)
            for k in ("local", "ray")
        ]
        print(
            f"The fake model server (outside the run, in no total): {outside[0] * 1000:.2f} / "
            f"{outside[1] * 1000:.2f} ms an item (local / Ray)"
        )
    print(
        f"Ray's extra CPU per item: **{(per_item['ray'] - per_item['local']) * 1000:.2f} ms** "
        f"({per_item['ray'] * 1000:.2f} against {per_item['local'] * 1000:.2f}: Ray / local "
        f"{per_item['ray'] / per_item['local']:.2f})"
    )
    ray_runs = [x for (kind, _), xs in cpu_runs.items() if kind == "ray" for x in xs]
    writes, commits = sum(x.writes for x in ray_runs), sum(x.commits for x in ray_runs)
    calls = sum(x.calls for x in ray_runs)
    print(
        f"Ray's one writer: {writes} writes in {commits} commits "
        f"({writes / max(commits, 1):.1f} writes a commit) and {calls} calls "
        f"({writes / max(calls, 1):.1f} writes a call) over the CPU runs"
    )


def print_throughput(a: argparse.Namespace, rows: list[tuple[int, list[Any]]]) -> None:
    """Items/s over whole runs and their steady part at each k, local beside Ray."""
    print(
        f"\n## Throughput ({a.throughput_items} items, check latency {a.latency * 1000:.0f} ms, "
        f"batches of {a.batch}, k REPLs as {a.shape}, median of {a.repeats})\n"
    )
    print(
        "| k | local items/s (steady) | Ray items/s (steady) | Ray / local (steady) "
        "| Ray vs k=1 (steady) | ideal | load |"
    )
    print("|---|---|---|---|---|---|---|")
    base = None
    for k, runs in rows:
        lw = med([a.throughput_items / lo.wall for lo, _ in runs])
        rw = med([a.throughput_items / r.wall for _, r in runs])
        ls = med([lo.steady for lo, _ in runs])
        rs = med([r.steady for _, r in runs])
        base = base or (rw, rs)
        loads = [x.load for pr in runs for x in pr]
        print(
            f"| {k} | {lw:.1f} ({ls:.1f}) | {rw:.1f} ({rs:.1f}) | {rw / lw:.2f} ({rs / ls:.2f}) "
            f"| {rw / base[0]:.2f}× ({rs / base[1]:.2f}×) | {k / a.latency:.1f} "
            f"| {min(loads):.1f}–{max(loads):.1f} |"
        )
