"""Latency of the web app's pages on a store with all of Mathlib and a 50,000-item run (SQLite).

Without --store: a synthetic store (N nodes with pending agent text). With --store: a COPY of a
real store (`cp /work/data/store/math2.db /tmp/x.db` first: the script migrates it and adds a run
to it). Either way it adds a run of --items items (3 attempts each; a quarter with a role-written
pass round, the rest passing by their attempts) and an audit of 200 samples, then times GET of
every page with FastAPI's in-process test client (no network, no browser): home, search, library,
node, declaration, run (first page and a page deep into the run), trajectory, review queue, audit.

--baseline also times the same pages with the indexes of migration 0007 dropped (the schema the
pages had before), in the same process, and prints the ratios.

    cp /work/data/store/math2.db /tmp/bench.db
    .venv/bin/python benchmarks/web_pages.py --store /tmp/bench.db \
        --index-dir /work/data/store/.math2/index --items 50000 --repeat 20 --baseline
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from math2.store import (
    AgentText,
    Attempt,
    AuditSample,
    Mention,
    ModelEntry,
    Node,
    Run,
    RunItem,
    open_store,
)
from math2.web import add_reviewer, create_app

NEW_INDEXES = [  # migration 0007's, dropped for --baseline
    ("ix_mentions_node_id", "mentions", "node_id, source_id"),
    ("ix_mentions_source_status", "mentions", "source_id, status"),
    ("ix_mentions_pin_id", "mentions", "pin_id"),
    ("ix_mentions_retired_pin_id", "mentions", "retired_pin_id"),
    ("ix_texts_node_id", "texts", "node_id"),
    ("ix_texts_mention_id", "texts", "mention_id"),
    ("ix_texts_source_id", "texts", "source_id"),
    ("ix_crosswalks_source_id", "crosswalks", "source_id"),
    ("ix_agent_texts_node_id", "agent_texts", "node_id"),
    ("ix_check_results_agent_text_id", "check_results", "agent_text_id"),
]


def seed_nodes(store, n: int) -> None:
    """A synthetic corpus: n nodes, each with a pending agent text."""
    with store.session() as s:
        model = ModelEntry(name="bench-model", revision="1")
        s.add(model)
        s.flush()
        nodes = [Node(key=f"n{i}", title=f"Node {i}") for i in range(n)]
        s.add_all(nodes)
        s.flush()
        s.add_all(
            AgentText(
                kind="informal_statement",
                body=f"For every $n > {i}$, $n^2 > {i}$.",
                node_id=node.id,
                model_id=model.id,
                template_id="t",
                template_hash="h" * 64,
            )
            for i, node in enumerate(nodes)
        )


def seed_run(store, items: int) -> tuple[int, str, str]:
    """A finished run of `items` items with 3 attempts each, and an audit; (run id, the middle
    item, the item a page deep into the run)."""
    with store.session() as s:
        run = Run(job="formalize", key=f"bench-{time.time_ns()}", spec_hash="b", status="done")
        s.add(run)
        s.flush()
        run_id = run.id
    width = len(str(items))
    batch = 10_000
    for lo in range(0, items, batch):
        with store.session() as s:
            s.add_all(
                RunItem(
                    run_id=run_id,
                    item=f"i{i:0{width}d}",
                    status="done",
                    result={"passed_round": i % 4 or None} if i % 4 == 0 else {},
                )
                for i in range(lo, min(items, lo + batch))
            )
            s.add_all(
                Attempt(
                    run_id=run_id,
                    item=f"i{i:0{width}d}",
                    stage="generate",
                    round=r,
                    verdict="pass" if r == 1 + i % 3 else "fail",
                    tokens_in=100,
                    tokens_out=50,
                )
                for i in range(lo, min(items, lo + batch))
                for r in range(1, 4)
            )
    with store.session() as s:
        s.add_all(
            AuditSample(
                audit="bench",
                role="formalize",
                library="lib",
                stratum=f"s{i % 5}",
                informal=f"Show $x_{i} = {i}$.",
                formal=f"theorem t{i} : True := trivial",
                pair_key=f"{i:064d}",
            )
            for i in range(200)
        )
    mid = f"i{items // 2:0{width}d}"
    deep = f"i{(items * 3) // 4:0{width}d}"
    return run_id, mid, deep


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, help="a COPY of a store to add the run to")
    ap.add_argument("--index-dir", type=Path, help="the search indexes (one folder a library)")
    ap.add_argument("--n", type=int, default=20000, help="synthetic nodes (without --store)")
    ap.add_argument("--items", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--query", default="pythagorean theorem")
    ap.add_argument("--run", type=int, help="time this run of --items items (seeded before)")
    ap.add_argument("--baseline", action="store_true", help="also time without 0007's indexes")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.store or Path(tmp) / "m.db"
        store = open_store(f"sqlite:///{db}", migrate=True)
        t0 = time.perf_counter()
        if args.store is None:
            seed_nodes(store, args.n)
        if args.run is None:
            run_id, mid, deep = seed_run(store, args.items)
        else:  # a run this script seeded in an earlier pass over the same copy
            width = len(str(args.items))
            run_id, mid = args.run, f"i{args.items // 2:0{width}d}"
            deep = f"i{(args.items * 3) // 4:0{width}d}"
        print(f"seeded a run of {args.items} items in {time.perf_counter() - t0:.1f} s")
        with store.session() as s:
            counts = {
                "mentions": s.scalar(select(func.count()).select_from(Mention)),
                "nodes": s.scalar(select(func.count()).select_from(Node)),
            }
        print(f"store {db}: {counts}")
        node_id, mention_id = pick(store)
        add_reviewer(store, "bench", "bench password")
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
            "/audit/bench",
        ]
        if not counts["mentions"]:  # synthetic: no library to show
            paths = [p for p in paths if not p.startswith(("/library", "/decl", "/search"))]
        results = {}
        with TestClient(create_app(store, index_dir, secret="s")) as c:
            token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]
            c.post(
                "/login",
                data={"csrf_token": token, "username": "bench", "password": "bench password"},
            )
            results["now"] = time_pages(c, paths, args.repeat)
            if args.baseline:
                with store.session() as s:
                    for name, _, _ in NEW_INDEXES:
                        s.execute(text(f"DROP INDEX IF EXISTS {name}"))
                c.app.state.library_counts = None
                results["base"] = time_pages(c, paths, max(3, args.repeat // 4))
                with store.session() as s:
                    for name, table, cols in NEW_INDEXES:
                        s.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})"))
        print(
            "| page | median ms | p95 ms | KiB |"
            + (" without 0007's indexes: median ms | ratio |" if args.baseline else "")
        )
        print("|---|---|---|---|" + ("---|---|" if args.baseline else ""))
        for path in paths:
            med, p95, kib = results["now"][path]
            row = f"| `{path}` | {med:.1f} | {p95:.1f} | {kib} |"
            if args.baseline:
                bmed = results["base"][path][0]
                row += f" {bmed:.1f} | {bmed / med:.1f}x |"
            print(row)
        store.close()


if __name__ == "__main__":
    main()
