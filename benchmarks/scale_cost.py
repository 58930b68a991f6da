"""Tokens per formalize item, for the costed plan of docs/scale.md: the project's own formalize
prompts (planner, generate, judge) rendered on real Mathlib declarations and counted by a real
tokenizer.

    python benchmarks/scale_cost.py --db /work/data/store/math2.db [--sample 500] [--hits 4]

The store is opened read-only. A seeded sample of Mathlib declarations that have a docstring
stands in for formalize items: the docstring is the informal statement, `kind name statement`
the Lean statement a generator would write. Each prompt is rendered with the builtin template
(round 1, no feedback; `--hits` other sampled declarations as the retrieved context) and
tokenized by llama-server's `/tokenize` (SmolLM2's 49k byte-level BPE). Answers: the generator's
is the declaration in a ```lean block with `:= by sorry`; the judge's a passing verdict
(the shortest it can be); the planner's a search decision naming two of the hits with a
one-sentence reason. Those three are stand-ins, not model output: no served model answers here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics

import httpx

from math2.llm.templates import builtin_dir, load_template_file
from math2.llm.testing.llama import LlamaServer


def sample(db: str, n: int) -> list[tuple[str, str, str, str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        src = con.execute("SELECT id FROM sources WHERE name = 'mathlib'").fetchone()[0]
        rows = con.execute(
            "SELECT name, kind, statement, docstring FROM mentions WHERE source_id = ? AND "
            "status = 'active' AND docstring IS NOT NULL AND docstring != '' AND "
            "statement IS NOT NULL",
            (src,),
        ).fetchall()
    finally:
        con.close()

    def key(r: tuple) -> str:
        return hashlib.sha256(f"scale-cost:{r[0]}".encode()).hexdigest()

    return sorted(rows, key=key)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a math2 SQLite store with Mathlib imported")
    ap.add_argument("--sample", type=int, default=500)
    ap.add_argument("--hits", type=int, default=4, help="retrieved declarations in the prompt")
    a = ap.parse_args()
    rows = sample(a.db, a.sample)
    folder = builtin_dir() / "formalize"
    planner, gen, judge = (
        load_template_file(folder / f"{t}.toml") for t in ("planner", "generate", "judge")
    )
    out: dict[str, list[int]] = {
        k: [] for k in ("planner_in", "planner_out", "gen_in", "gen_out", "judge_in", "judge_out")
    }
    with (
        LlamaServer(threads=1, parallel=1) as srv,
        httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", timeout=60) as http,
    ):

        def count(msgs: list[dict[str, str]] | str) -> int:
            text = msgs if isinstance(msgs, str) else "\n".join(m["content"] for m in msgs)
            return len(http.post("/tokenize", json={"content": text}).json()["tokens"])

        for i, (name, kind, stmt, doc) in enumerate(rows):
            lean = f"{kind} {name} {stmt}"
            others = [rows[(i + j + 1) % len(rows)] for j in range(a.hits)]
            hits = [{"name": o[0], "statement": o[2]} for o in others]
            out["planner_in"].append(count(planner.render(statement=doc, queries=[], feedback="")))
            plan = {"search": True, "queries": [h["name"] for h in hits[:2]], "reason": doc[:80]}
            out["planner_out"].append(count(json.dumps(plan)))
            msgs = gen.render(statement=doc, hits=hits, previous=None, feedback="", round=1)
            out["gen_in"].append(count(msgs))
            out["gen_out"].append(count(f"```lean\n{lean} := by sorry\n```"))
            out["judge_in"].append(count(judge.render(statement=doc, lean=lean)))
            verdict = {"consistent": True, "defects": [], "needs_retrieval": False, "queries": []}
            out["judge_out"].append(count(json.dumps(verdict)))
    print(f"{len(rows)} Mathlib declarations with a docstring, {a.hits} hits in the prompt")
    print("| call | tokens in (mean / median / p95) | tokens out (mean) |")
    print("|---|---|---|")
    for call in ("planner", "gen", "judge"):
        xs = sorted(out[f"{call}_in"])
        p95 = xs[int(0.95 * (len(xs) - 1))]
        print(
            f"| {call} | {statistics.mean(xs):.0f} / {statistics.median(xs):.0f} / {p95} "
            f"| {statistics.mean(out[f'{call}_out']):.0f} |"
        )


if __name__ == "__main__":
    main()
