"""Candidate pairs between Mathlib and the other systems (issue 43 §6) on real checkouts at
their pins: what `math2 align --systems` proposes before anything is judged — candidates per
system by name and by the theorem lists' facts, and, where a list links a node to the system
by hand (an accepted edge), the share of those nodes whose human target is among its
candidates (the top k).

    MATH2_DATA__DIR=/path/to/data python benchmarks/systems_candidates.py \\
        --store /tmp/systems.db --mathlib /path/mathlib4 \\
        --checkout rocq-stdlib=/path/stdlib --checkout hol-light=/path/hol-light … [--k 3]

The store (SQLite, made when absent) gets Mathlib's source scan, Mathlib's theorem lists and
the 1000+ list (from the data folder, `math2 data`), each checkout, and the clustering pass;
an import already in the store is skipped, so a second run only proposes. The facts channel
searches each system's library with `math2.retrieval` under `--index-dir` (a BM25 index of
each checkout's library is built there when absent), else it is left out and said so. Prints
the process's CPU seconds per step and the load averages.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from sqlalchemy import select

from math2.config import load_settings
from math2.crosswalk.cluster import cluster
from math2.data import locate
from math2.importers.registry import load_builtin_importers
from math2.roles.align.systems import (
    SYSTEM_SOURCES,
    _lean_on_nodes,
    name_keys,
    propose_for_systems,
)
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, open_store


def step(what: str, fn):  # type: ignore[no-untyped-def]
    c0, w0, load = time.process_time(), time.perf_counter(), os.getloadavg()[0]
    out = fn()
    print(
        f"{what}: CPU {time.process_time() - c0:.1f} s, wall {time.perf_counter() - w0:.1f} s, "
        f"load 1-min {load:.1f} → {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True, help="a SQLite file (made when absent)")
    ap.add_argument("--mathlib", type=Path, required=True, help="a Mathlib checkout at the pin")
    ap.add_argument("--checkout", action="append", default=[], help="SOURCE=PATH")
    ap.add_argument("--manifest", type=Path, default=Path("manifests/sources.yaml"))
    ap.add_argument("--index-dir", type=Path, help="math2.retrieval's index folder (facts)")
    ap.add_argument("--k", type=int, default=3)
    a = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    manifest = load_manifest(a.manifest)
    store = open_store(f"sqlite:///{a.store}", migrate=True, create=True)
    with store.session() as s:
        sync_manifest(s, manifest)
    specs = load_builtin_importers()
    settings = load_settings()

    def run(name: str, path: Path) -> None:
        res = specs[name].run(store, manifest.get(name), path)
        print(f"  {name}: {'already in the store' if res.skipped_already_done else res.counts}")

    step("mathlib (source scan)", lambda: run("mathlib", a.mathlib))
    for name, data_set in (("mathlib-theorem-lists", "mathlib-docs"), ("1000-plus", "1000-plus")):
        step(name, lambda name=name, d=data_set: run(name, locate(settings, d)))
    a_sources = {spec.partition("=")[0] for spec in a.checkout}
    for spec in a.checkout:
        name, _, path = spec.partition("=")
        step(name, lambda name=name, path=path: run(name, Path(path)))

    def clustered() -> None:
        with store.session() as s:
            cluster(s)

    step("clustering", clustered)
    search = None
    if a.index_dir is not None:
        from math2.retrieval import Searcher
        from math2.retrieval.index import build_index

        for source in SYSTEM_SOURCES.values():
            folder = a.index_dir / source
            if (folder / "meta.json").is_file() or source not in a_sources:
                continue
            step(f"index of {source} (BM25)", lambda f=folder, src=source: build_index(
                store, f, src, dense=False))  # fmt: skip
        searcher = Searcher(a.index_dir)

        def search(library: str, query: str, k: int) -> list[tuple[str, int | None]]:
            return [(h.name, h.mention_id) for h in searcher.search(query, library, k)]

    with store.session() as s:
        by_two: dict[str, set[int]] = {}
        by_last: dict[str, set[int]] = {}
        for node_id, name, _ in _lean_on_nodes(s):
            two, last = name_keys(name)
            by_two.setdefault(two, set()).add(node_id)
            by_last.setdefault(last, set()).add(node_id)

        def name_hits(target: str) -> set[int]:
            """The nodes `propose_for_systems`' name channel pairs a declaration with."""
            two, last = name_keys(target)
            return by_two.get(two) or (by_last[last] if len(by_last.get(last, ())) == 1 else set())

        got = step("propose", lambda: propose_for_systems(s, search, k=a.k))
        print(
            "\n| system | source | candidates | by name | by facts | nodes with facts |"
            " human links | human target found by the name channel | … in the facts' top k |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for c in got:
            human = {
                (n, t)
                for n, t in s.execute(
                    select(Crosswalk.node_id, Crosswalk.target).where(
                        Crosswalk.system == c.system, Crosswalk.status == "accepted"
                    )
                )
            }
            nodes = {n for n, _ in human}
            # a human edge is never proposed again: would the name channel have found it?
            found = {n for n, t in human if n in name_hits(t)}
            facts = f"{c.by_facts}" if search else "not searched (no index)"
            print(
                f"| {c.system} | {c.source} | {c.candidates:,} | {c.by_name:,} | {facts} | "
                f"{c.nodes_with_facts} | {len(nodes)} | {len(found)} of {len(nodes)} | "
                + (f"{c.human_in_top} of {c.human_links} |" if search else "- |")
            )
        missing = sorted(set(SYSTEM_SOURCES.values()) - {c.source for c in got})
        print(f"not in the store: {', '.join(missing) or '-'}")
        s.rollback()  # the candidates are counted, not kept: a second run proposes again


if __name__ == "__main__":
    main()
