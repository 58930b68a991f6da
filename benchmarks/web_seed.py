"""What the web benchmarks add to a COPY of a store: a review queue, a finished run, an audit.

The queue is what a team reviews: agent texts waiting for a person (informal and formal
statements and descriptions written for Mathlib declarations, two check verdicts each), open
bindings of nodes to Mathlib declarations (proposed, checked, check failed), and bindings to a
small AI-written library whose definitions (K6.5) wait for a person too. The AI library is
synthetic (`bench-ai-lib`): the store built from the sources has no AI library with
declarations.
"""

from __future__ import annotations

import time

from sqlalchemy import func, select

from math2.store import (
    AgentText,
    Attempt,
    AuditSample,
    Binding,
    CheckResultRow,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Run,
    RunItem,
    Source,
    Store,
)

KINDS = ("informal_statement",) * 3 + ("formal_statement", "description")


def _model(s) -> int:
    model = s.scalar(select(ModelEntry).where(ModelEntry.name == "bench-model"))
    if model is None:
        model = ModelEntry(name="bench-model", revision="1")
        s.add(model)
        s.flush()
    return model.id


def seed_nodes(store: Store, n: int) -> None:
    """A synthetic corpus (no library): n nodes."""
    with store.session() as s:
        s.add_all(Node(key=f"n{i}", title=f"Node {i}") for i in range(n))


def _ai_library(s, n_defs: int, n_thms: int) -> list[int]:
    """A synthetic AI-written library: definitions and theorems that use two of them each."""
    src = Source(
        name="bench-ai-lib", title="synthetic AI-written library (benchmark)", system="lean4",
        kind="library", licence="CC0-1.0", authored="ai", authored_reason="benchmark",
        route="benchmark", intake_class="open_text+bindings", bindings=True,
        decided_by="benchmark", manifest_digest="b",
    )  # fmt: skip
    s.add(src)
    s.flush()
    pin = Pin(source_id=src.id, key="v1", is_current=True, licence="CC0-1.0",
              intake_class="open_text+bindings", decided_by="benchmark")  # fmt: skip
    s.add(pin)
    s.flush()

    def mention(name: str, kind: str, statement: str) -> Mention:
        return Mention(source_id=src.id, pin_id=pin.id, name=name, kind=kind, module="BenchAi",
                       statement=statement, licence="CC0-1.0",
                       intake_class="open_text+bindings", authored="ai")  # fmt: skip

    s.add_all(
        mention(f"BenchAi.Def{i}", "def", f"def BenchAi.Def{i} (n : ℕ) : ℕ := n + {i}")
        for i in range(n_defs)
    )
    thms = [
        mention(
            f"BenchAi.thm{i}",
            "theorem",
            f"theorem BenchAi.thm{i} (n : ℕ) : BenchAi.Def{i % n_defs} n ≤ "
            f"BenchAi.Def{(i + 1) % n_defs} (n + {i})",
        )
        for i in range(n_thms)
    ]
    s.add_all(thms)
    s.flush()
    return [m.id for m in thms]


def seed_queue(store: Store, agent_texts: int, bindings: int, ai_bindings: int) -> dict[str, int]:
    """The queue: `agent_texts` pending texts, `bindings` open bindings to Mathlib declarations
    (or to synthetic nodes' own statements when the store has no library), `ai_bindings` checked
    bindings to the AI library. Returns ids the pages are timed at."""
    t0 = time.perf_counter()
    with store.session() as s:
        model_id = _model(s)
        nodes = list(s.scalars(select(Node.id).order_by(Node.id)))
        if not nodes:
            raise SystemExit("the store has no nodes to attach the queue to")
        decls = s.execute(
            select(Mention.id, Mention.name, Mention.statement, Mention.node_id)
            .where(Mention.kind == "theorem", Mention.status == "active")
            .order_by(Mention.id)
            .limit(max(agent_texts, bindings))
        ).all()
    batch = 5_000
    for lo in range(0, agent_texts, batch):
        with store.session() as s:
            rows = []
            for i in range(lo, min(agent_texts, lo + batch)):
                d = decls[i % len(decls)] if decls else None
                kind = KINDS[i % len(KINDS)]
                body = (
                    f"theorem bench_{i} (a b : ℕ) (h : a ≤ b) : a * a ≤ b * b := by sorry"
                    if kind == "formal_statement"
                    else f"For all natural numbers $a \\le b$ (item {i}), we have $a^2 \\le b^2$; "
                    f"this is the statement of {d.name if d else f'node {i}'} in words."
                )
                rows.append(
                    AgentText(
                        kind=kind,
                        body=body,
                        source_text=d.statement if d else None,
                        node_id=(d.node_id if d and d.node_id else nodes[i % len(nodes)]),
                        mention_id=d.id if d else None,
                        model_id=model_id,
                        template_id="informalize.statement",
                        template_hash="h" * 64,
                    )
                )
            s.add_all(rows)
            s.flush()
            s.add_all(
                CheckResultRow(
                    pair_key=f"{a.id:064d}",
                    check=check,
                    checker="bench-model@1",
                    verdict="pass" if a.id % 7 else "fail",
                    score=0.8,
                    agent_text_id=a.id,
                )
                for a in rows
                for check in ("back_translation_nli", "copy_check")
            )
    statuses = ("checked", "proposed", "check_failed")
    check = {"passed": True, "reason": "compiled; axioms: propext", "compiled_by": "bench"}
    with store.session() as s:
        taken = set(s.execute(select(Binding.node_id, Binding.mention_id)).tuples())
        made = 0
        for i in range(len(decls) * len(nodes)):
            if made >= bindings or not decls:
                break
            node, decl = nodes[i % len(nodes)], decls[(i // len(nodes) + i) % len(decls)].id
            if (node, decl) in taken:
                continue
            taken.add((node, decl))
            status = statuses[made % 3]
            s.add(Binding(node_id=node, mention_id=decl, status=status, origin="align",
                          lean_check=check if status == "checked" else {}))  # fmt: skip
            made += 1
        ai_ids = _ai_library(s, n_defs=20, n_thms=ai_bindings)
        s.add_all(
            Binding(
                node_id=nodes[i % len(nodes)],
                mention_id=m,
                status="checked",
                origin="align",
                lean_check=check,
            )
            for i, m in enumerate(ai_ids)
        )
        s.flush()
        first_ai = s.scalar(select(func.min(Binding.id)).where(Binding.mention_id.in_(ai_ids)))
        agent_ids = list(
            s.scalars(select(AgentText.id).where(AgentText.status == "pending").order_by("id"))
        )
        binding_ids = list(
            s.scalars(
                select(Binding.id)
                .where(Binding.status.in_(("proposed", "checked", "check_failed")))
                .order_by("id")
            )
        )
    print(
        f"queued {agent_texts} agent texts, {made} bindings, {ai_bindings} AI-library bindings "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return {
        "deep_agent": agent_ids[(len(agent_ids) * 3) // 4],
        "deep_binding": binding_ids[(len(binding_ids) * 3) // 4],
        "ai_binding": first_ai or binding_ids[0],
        "first_agent": agent_ids[0],
    }


def seed_run(store: Store, items: int) -> tuple[int, str, str]:
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
