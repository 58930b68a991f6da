"""What informalizing all of Mathlib would cost: prompt and answer tokens per declaration,
measured on a seeded sample of the store's Mathlib declarations through a real tokenizer.

    python benchmarks/informalize_cost.py --db sqlite:///math2.db [--sample 2000]

Each sampled declaration's prompt is rendered with the project's own template
(`informalize/statement`: system + user with name, kind, module, Lean statement, docstring; no
dependency descriptions, which the route adds per dependency) and tokenized by llama-server's
`/tokenize` (the SmolLM2 tokenizer: a 49k byte-level BPE, close to the Llama/Qwen family's on
mathematical text). The answer's length is not measurable without running the route; the
docstrings of the declarations that have one (human descriptions of the same thing) are
tokenized as the stand-in. Totals are scaled to every active, completable declaration.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics

import httpx
from sqlalchemy import select

from math2.lean.syntax import constants_of
from math2.llm.templates import builtin_dir, load_template_file
from math2.llm.testing.llama import LlamaServer
from math2.store import Mention, Source, Store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--sample", type=int, default=2000)
    args = ap.parse_args()
    store = Store(args.db)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        rows = s.execute(
            select(Mention.name, Mention.kind, Mention.module, Mention.statement,
                   Mention.docstring).where(
                Mention.source_id == src.id, Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
        ).all()  # fmt: skip
    total = len(rows)

    def key(name: str) -> str:
        return hashlib.sha256(f"informalize-cost:{name}".encode()).hexdigest()

    sample = sorted(rows, key=lambda r: key(r[0]))[: args.sample]
    prompt = load_template_file(builtin_dir() / "informalize" / "statement.toml")
    with (
        LlamaServer(threads=1, parallel=1) as srv,
        httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", timeout=60) as http,
    ):

        def count(text: str) -> int:
            return len(http.post("/tokenize", json={"content": text}).json()["tokens"])

        system = count(prompt.system or "")
        user, answer, names = [], [], []
        for name, kind, module, stmt, doc in sample:
            msgs = prompt.render(
                name=name, kind=kind, module=module, lean=f"{kind} {name} {stmt or ''}",
                docstring=doc, deps=[], context=[],
            )  # fmt: skip
            user.append(count(msgs[-1]["content"]))
            names.append(count(name))
            if doc:
                answer.append(count(doc))
    mean_in = system + statistics.mean(user)
    mean_out = statistics.mean(answer)
    deps = statistics.mean(len(constants_of(r[3])) for r in sample)
    name_tokens = statistics.mean(n for n in names)
    per_dep = name_tokens + 4 + mean_out  # "- name: description" per dependency
    print(f"declarations: {total} (sample {len(sample)}, {len(answer)} with a docstring)")
    print(f"prompt tokens per declaration: system {system} + user mean "
          f"{statistics.mean(user):.0f} (median {statistics.median(user):.0f}, "
          f"p95 {sorted(user)[int(0.95 * (len(user) - 1))]}) = {mean_in:.0f}")  # fmt: skip
    print(f"answer stand-in (docstring) tokens: mean {mean_out:.0f}, "
          f"median {statistics.median(answer):.0f}")  # fmt: skip
    print(f"constants a statement uses: mean {deps:.1f}; a dependency line ≈ {per_dep:.0f} tokens")
    with_deps = mean_in + deps * per_dep
    print(f"all of Mathlib: {mean_in * total / 1e6:.1f} M prompt tokens without dependency "
          f"descriptions, {with_deps * total / 1e6:.1f} M with them (Herald's route), "
          f"{mean_out * total / 1e6:.1f} M answer tokens")  # fmt: skip


if __name__ == "__main__":
    main()
