"""Latency of the web app's pages on a store with all of Mathlib, a 50,000-item run and a review
queue of 10,000 agent texts (SQLite); then sign-in floods against `math2 serve` (--flood).

Without --store: a synthetic store (N nodes). With --store: a COPY of a real store
(`cp /work/data/store/math2.db /tmp/x.db` first: the script migrates it and adds to it). Either
way it adds the review queue of `web_seed.py` (--queue agent texts, --bindings open bindings to
Mathlib declarations, --ai-bindings bindings to a synthetic AI-written library whose definitions
wait too), a run of --items items (3 attempts each) and an audit of 200 samples, then times GET
of every page with FastAPI's in-process test client (no network, no browser): home, search,
library, node, declaration, run (first page and a page deep into it), trajectory, the review
queue (first page, one kind, a page deep into it, bindings, deep bindings), a binding of the AI
library, audit. Median and p95 of --repeat loads each, with this process's CPU time and the load
average beside the wall time.

--baseline also times the same pages with migration 0010's indexes dropped and the two it
replaced back (the schema the queue had before), in the same process, and prints the ratios.

--flood then runs `web_flood.py`'s scenarios against `math2 serve` over the same store.

    cp /work/data/store/math2.db /tmp/bench.db
    .venv/bin/python benchmarks/web_pages.py --store /tmp/bench.db \
        --index-dir /work/data/store/.math2/index --items 50000 --queue 10000 --repeat 20 \
        --baseline --flood
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from math2.store import Mention, Node, Source, open_store
from math2.web import add_reviewer, create_app

sys.path.insert(0, str(Path(__file__).parent))
from web_flood import floods
from web_flood import table as flood_table
from web_seed import seed_nodes, seed_queue, seed_run

NEW_INDEXES = [  # migration 0010's (the queue's keyset pages), dropped for --baseline
    ("ix_agent_texts_status_kind_id", "agent_texts", "status, kind, id"),
    ("ix_agent_texts_status_id", "agent_texts", "status, id"),
    ("ix_bindings_status_id", "bindings", "status, id"),
]
REPLACED = [  # created while 0010's are dropped
    ("ix_agent_texts_status_kind", "agent_texts", "status, kind"),
    ("ix_bindings_status", "bindings", "status"),
]


def pick(store) -> tuple[int, int]:
    """The node with the most declarations attached, and a Mathlib declaration."""
    with store.session() as s:
        node_id = s.execute(
            select(Mention.node_id, func.count().label("n"))
            .where(Mention.node_id.is_not(None))
            .group_by(Mention.node_id)
            .order_by(text("n DESC"))
            .limit(1)
        ).scalar()
        if node_id is None:
            node_id = s.scalar(select(func.min(Node.id)))
        mention_id = s.scalar(select(func.max(Mention.id))) or 1
    return node_id, mention_id


def time_pages(c: TestClient, paths: list[str], repeat: int) -> dict[str, tuple[float, float, int]]:
    """Per path: median ms, p95 ms, KiB."""
    out = {}
    for path in paths:
        c.get(path)  # warm (a search loads its index on first use)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            r = c.get(path)
            times.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, (path, r.status_code)
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        out[path] = (statistics.median(times), p95, len(r.content) // 1024)
    return out


def _cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


def _drop_indexes(store, drop: bool) -> None:
    with store.session() as s:
        if drop:
            for name, _, _ in NEW_INDEXES:
                s.execute(text(f"DROP INDEX IF EXISTS {name}"))
            for name, table, cols in REPLACED:
                s.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})"))
        else:
            for name, table, cols in NEW_INDEXES:
                s.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})"))
            for name, _, _ in REPLACED:
                s.execute(text(f"DROP INDEX IF EXISTS {name}"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, help="a COPY of a store to add the run to")
    ap.add_argument("--index-dir", type=Path, help="the search indexes (one folder a library)")
    ap.add_argument("--n", type=int, default=20000, help="synthetic nodes (without --store)")
    ap.add_argument("--items", type=int, default=50000)
    ap.add_argument("--queue", type=int, default=10000, help="agent texts waiting")
    ap.add_argument("--bindings", type=int, default=3000, help="open bindings")
    ap.add_argument("--ai-bindings", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--query", default="pythagorean theorem")
    ap.add_argument("--baseline", action="store_true", help="also time without 0010's indexes")
    ap.add_argument("--flood", action="store_true", help="then the sign-in floods")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.store or Path(tmp) / "m.db"
        store = open_store(f"sqlite:///{db}", migrate=True)
        t0 = time.perf_counter()
        if args.store is None:
            seed_nodes(store, args.n)
        q = seed_queue(store, args.queue, args.bindings, args.ai_bindings)
        run_id, mid, deep = seed_run(store, args.items)
        print(f"seeded in {time.perf_counter() - t0:.1f} s")
        with store.session() as s:
            counts = {
                "mentions": s.scalar(select(func.count()).select_from(Mention)),
                "nodes": s.scalar(select(func.count()).select_from(Node)),
            }
            has_mathlib = s.scalar(select(Source.id).where(Source.name == "mathlib")) is not None
        print(f"store {db}: {counts}")
        node_id, mention_id = pick(store)
        for name in ("bench", "alice", "bob"):
            add_reviewer(store, name, "bench password")
        index_dir = args.index_dir or Path(tmp) / "index"
        paths = [
            "/",
            f"/search?q={args.query.replace(' ', '+')}&library=mathlib",
            "/library/mathlib",
            f"/node/{node_id}",
            f"/decl/{mention_id}",
            f"/runs/{run_id}",
            f"/runs/{run_id}?after={deep}",
            f"/runs/{run_id}/trajectory?item={mid}",
            "/review",
            "/review?kind=informal_statement",
            f"/review?kind=agent-text&after={q['deep_agent']}",
            "/review?kind=binding",
            f"/review?kind=binding&after={q['deep_binding']}",
            f"/review/binding/{q['ai_binding']}",
            "/audit/bench",
        ]
        if not has_mathlib:  # synthetic: no library to show
            paths = [p for p in paths if not p.startswith(("/library", "/decl", "/search"))]
        results, cpu, wall, load = {}, {}, {}, {}
        with TestClient(create_app(store, index_dir, secret="s")) as c:
            token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]
            c.post(
                "/login",
                data={"csrf_token": token, "username": "bench", "password": "bench password"},
            )
            runs = [("now", args.repeat)]
            if args.baseline:
                runs.append(("base", max(3, args.repeat // 4)))
            for key, repeat in runs:
                _drop_indexes(store, key == "base")
                c.app.state.library_counts = None
                load[key] = os.getloadavg()[0]
                c0, w0 = _cpu(), time.perf_counter()
                results[key] = time_pages(c, paths, repeat)
                cpu[key], wall[key] = _cpu() - c0, time.perf_counter() - w0
            _drop_indexes(store, False)
        for key in results:
            print(
                f"{key}: {len(paths)} pages × {dict(runs)[key]} loads in {wall[key]:.1f} s wall, "
                f"{cpu[key]:.1f} s CPU (this process: user+sys), load average {load[key]:.1f} "
                f"on {os.cpu_count()} cores"
            )
        print(
            "| page | median ms | p95 ms | KiB |"
            + (" without 0010's indexes: median ms | ratio |" if args.baseline else "")
        )
        print("|---|---|---|---|" + ("---|---|" if args.baseline else ""))
        for path in paths:
            med, p95, kib = results["now"][path]
            row = f"| `{path}` | {med:.1f} | {p95:.1f} | {kib} |"
            if args.baseline:
                bmed = results["base"][path][0]
                row += f" {bmed:.1f} | {bmed / med:.1f}x |"
            print(row)
        if args.flood:
            flood_pages = ["/review", f"/node/{node_id}", "/review?kind=binding"]
            print(flood_table(floods(db, index_dir, flood_pages)))
        store.close()


if __name__ == "__main__":
    main()
