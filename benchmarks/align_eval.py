"""Precision and recall of the align judge against human-made pairs, with any registered model.

    nice -n 10 .venv/bin/python benchmarks/align_eval.py --store /work/data/store/math2.db \
        --index /work/data/store/.math2/index/mathlib --model NAME --base-url URL --limit 10
    nice -n 10 .venv/bin/python benchmarks/align_eval.py ... --llama   # SmolLM2 via llama-server

Positives: Mathlib's `@[stacks]` attributes as the store holds them, and the theorem lists'
Metamath ↔ Lean entries (up to --limit of each, drawn with --seed). Negatives: for each
positive, the search's top hit for its declaration that is not that declaration (hard) and
another positive's declaration (random). The store given is only read; the judge's run, its
attempts and the response cache go to a scratch store under --work. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import time
from pathlib import Path

from math2.config import LLMSettings, Settings
from math2.llm import add_model
from math2.retrieval.index import SearchIndex
from math2.roles.align.candidates import list_pairs, stacks_pairs
from math2.roles.align.evaluate import judge_pairs, labelled_pairs, score
from math2.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", type=Path, required=True, help="math2.db with Mathlib + lists")
    ap.add_argument("--index", type=Path, help="the Mathlib search index (hard negatives)")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--base-url", help="an OpenAI-compatible endpoint serving --model")
    ap.add_argument("--llama", action="store_true", help="start llama-server with SmolLM2")
    ap.add_argument("--limit", type=int, default=10, help="positives per source")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--work", type=Path, default=Path(".align-eval"))
    a = ap.parse_args()
    src = Store(f"sqlite:///{a.store.resolve()}")  # give it a copy: it is only read
    rng = random.Random(a.seed)
    with src.session() as s:
        stacks, lists = stacks_pairs(s), list_pairs(s)
        print(f"human pairs in the store: {len(stacks)} @[stacks], {len(lists)} lists")
        chosen = rng.sample(stacks, min(a.limit, len(stacks))) + rng.sample(
            lists, min(a.limit, len(lists))
        )
        search = None
        if a.index:
            index = SearchIndex(a.index)
            search = lambda q, k: [(h.name, h.mention_id) for h in index.search(q, k)]  # noqa: E731
        pairs = labelled_pairs(s, chosen, search, seed=a.seed)
    a.work.mkdir(parents=True, exist_ok=True)
    scratch = Store(f"sqlite:///{(a.work / 'eval.db').resolve()}")
    scratch.upgrade()
    with scratch.session() as s:
        add_model(s, a.model)
    server = None
    base_url = a.base_url
    if a.llama:
        from math2.llm.testing.llama import LlamaServer

        server = LlamaServer(model=a.model, n_predict=a.max_tokens)
        server.__enter__()
        base_url = server.base_url
    started = time.monotonic()
    try:
        st = Settings(llm=LLMSettings(base_url=base_url, concurrency=2))
        results = asyncio.run(judge_pairs(st, scratch, a.model, pairs, max_tokens=a.max_tokens))
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    wall = time.monotonic() - started
    print(
        f"\nmodel {a.model}, {len(pairs)} pairs, {wall:.0f} s, seed {a.seed}, "
        f"{os.cpu_count()} cores, {platform.machine()}\n"
    )
    print("| pairs | n | TP | FP | FN | TN | unjudged | precision | recall |")
    print("|---|---|---|---|---|---|---|---|---|")
    groups = {
        "all": pairs,
        "@[stacks] positives + their negatives": [
            p for p in pairs if p.pair.dataset == "mathlib @[stacks]"
        ],
        "lists (Metamath) positives + their negatives": [
            p for p in pairs if p.pair.dataset == "theorem lists"
        ],
    }
    for name, group in groups.items():
        sc = score(group, results)
        print(
            f"| {name} | {sc.n} | {sc.tp} | {sc.fp} | {sc.fn} | {sc.tn} | {sc.unjudged} | "
            f"{sc.precision:.2f} | {sc.recall:.2f} |"
        )
    for kind in ("positive", "hard", "random"):
        group = [p for p in pairs if p.kind == kind]
        sc = score(group, results)
        said = sc.tp + sc.fp
        print(f"- {kind}: {len(group)} pairs, judged same {said}, unjudged {sc.unjudged}")


if __name__ == "__main__":
    main()
