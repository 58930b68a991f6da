"""Latency of the web app's heaviest pages on a large synthetic store (SQLite).

Seeds N pending agent texts (one per node), a run of N items with 3 attempts each, and an audit
of 200 samples; then times GET of the node page, the review queue (signed in), the run page and
the audit page with FastAPI's in-process test client (no network, no browser).

    .venv/bin/python benchmarks/web_pages.py --n 20000 --repeat 20
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from math2.store import (
    AgentText,
    Attempt,
    AuditSample,
    ModelEntry,
    Node,
    Run,
    RunItem,
    open_store,
)
from math2.web import add_reviewer, create_app


def seed(store, n: int) -> int:
    with store.session() as s:
        model = ModelEntry(name="bench-model", revision="1")
        s.add(model)
        s.flush()
        run = Run(job="formalize", key="bench", spec_hash="b", status="done")
        s.add(run)
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
        s.add_all(
            RunItem(run_id=run.id, item=f"i{i}", result={"passed_round": i % 4 or None})
            for i in range(n)
        )
        s.add_all(
            Attempt(run_id=run.id, item=f"i{i}", stage="generate", round=r, verdict="parsed")
            for i in range(n)
            for r in range(1, 4)
        )
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
        return nodes[n // 2].id


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'm.db'}", migrate=True)
        t0 = time.perf_counter()
        node_id = seed(store, args.n)
        print(f"seeded {args.n} nodes/agent texts/items in {time.perf_counter() - t0:.1f} s")
        add_reviewer(store, "bench", "bench password")
        with TestClient(create_app(store, Path(tmp) / "index", secret="s")) as c:
            token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]
            c.post(
                "/login",
                data={"csrf_token": token, "username": "bench", "password": "bench password"},
            )
            for path in (f"/node/{node_id}", "/review", "/runs/1", "/audit/bench"):
                times = []
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    r = c.get(path)
                    times.append((time.perf_counter() - t) * 1000)
                    assert r.status_code == 200, (path, r.status_code)
                times.sort()
                p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
                median, kib = statistics.median(times), len(r.content) // 1024
                print(f"| `{path}` | {median:.1f} | {p95:.1f} | {kib} |")
        store.close()


if __name__ == "__main__":
    main()
