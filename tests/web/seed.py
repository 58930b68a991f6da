"""A small corpus for the web tests, written straight through the store models."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from math2.store import (
    AgentText,
    Attempt,
    AuditSample,
    Binding,
    CheckResultRow,
    Crosswalk,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Run,
    RunItem,
    Source,
    Store,
    TextRecord,
)
from tests.seeding import add_pin, add_source, mention_of

XSS_TEXT = 'Beware <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned=3">'
XSS_TEX = r"Click $\href{javascript:window.__pwned=2}{here}$ for $a^2+b^2=c^2$."


@dataclass
class Seeded:
    node_id: int  # the node whose agent text the tests confirm (starts at W0)
    xss_node_id: int  # the node with hostile text
    agent_text_id: int
    binding_id: int  # a binding Lean checked, waiting for a person, on the xss node
    run_id: int
    audit: str
    sample_ids: list[int]


def _mention(src: Source, pin: Pin, name: str, statement: str, **kw) -> Mention:
    return mention_of(
        src, pin, name, kind="theorem", module="Mathlib.Test", statement=statement, **kw
    )


def seed(store: Store) -> Seeded:
    """Two pins of Mathlib, two nodes, agent text, checks, a run with attempts and an audit."""
    with store.session() as s:
        src = add_source(
            s,
            "mathlib",
            title="Mathlib 4",
            authored_reason="written by people",
            route="lean_scout",
            decided_by="Q2",
        )
        old = add_pin(
            s,
            src,
            "v4.9.0",
            current=False,
            commit="aaaa1111",
            toolchain="leanprover/lean4:v4.9.0",
        )
        new = add_pin(s, src, "v4.10.0", commit="bbbb2222", toolchain="leanprover/lean4:v4.10.0")
        node = Node(key="Q11518", wikidata="Q11518", title="Pythagorean theorem", level="W0")
        xss = Node(key="hostile", title="Hostile text <b>bold?</b>", level="W1")
        s.add_all([node, xss])
        s.flush()
        m_old = _mention(
            src,
            old,
            "EuclideanGeometry.dist_sq_eq_old",
            "theorem EuclideanGeometry.dist_sq_eq_old (p1 p2 p3 : P) : True := trivial",
            node_id=node.id,
            status="retired",
            retired_pin_id=new.id,
            successor="EuclideanGeometry.dist_sq_eq_dist_sq_add_dist_sq_iff_angle_eq_pi_div_two",
        )
        m_new = _mention(
            src,
            new,
            "EuclideanGeometry.dist_sq_eq_dist_sq_add_dist_sq_iff_angle_eq_pi_div_two",
            "theorem EuclideanGeometry.dist_sq_eq_dist_sq_add_dist_sq_iff_angle_eq_pi_div_two "
            "(p1 p2 p3 : P) : dist p1 p3 * dist p1 p3 = dist p1 p2 * dist p1 p2 + "
            "dist p3 p2 * dist p3 p2 ↔ ∠ p1 p2 p3 = π / 2",
            node_id=node.id,
        )
        m_other = _mention(
            src,
            new,
            "Nat.add_comm",
            "theorem Nat.add_comm (n m : ℕ) : n + m = m + n",
            docstring="Addition of natural numbers is commutative.",
            node_id=xss.id,
        )
        m_prime = _mention(
            src, new, "Nat.Prime.two_le", "theorem Nat.Prime.two_le {p : ℕ} (hp : p.Prime) : 2 ≤ p"
        )
        s.add_all([m_old, m_new, m_other, m_prime])
        s.flush()
        s.add(Binding(node_id=node.id, mention_id=m_new.id, status="confirmed"))
        proposed = Binding(node_id=xss.id, mention_id=m_other.id, status="checked")
        s.add(proposed)
        s.add_all(
            [
                Crosswalk(
                    node_id=node.id,
                    system="metamath",
                    target="pythag",
                    relation="same_as",
                    source_id=src.id,
                ),
                Crosswalk(
                    node_id=node.id,
                    system="lean4",
                    target=m_new.name,
                    mention_id=m_new.id,
                    source_id=src.id,
                    pin_id=new.id,
                ),
            ]
        )
        model = ModelEntry(name="herald-translator", revision="r1", provider="local")
        s.add(model)
        s.flush()
        s.add_all(
            [
                TextRecord(
                    node_id=xss.id,
                    role="statement",
                    body=XSS_TEXT,
                    zone="prose",
                    licence="CC-BY-4.0",
                    attribution="test fixture <em>attribution</em>",
                    author_kind="person",
                    author="tester",
                ),
                TextRecord(
                    node_id=xss.id,
                    role="prose",
                    body=XSS_TEX,
                    zone="prose",
                    licence="CC0-1.0",
                    attribution="test fixture",
                    author_kind="person",
                ),
            ]
        )
        # Fixed times, so that the screenshots only change when the page does.
        run = Run(
            job="formalize",
            key="minif2f@abc",
            spec_hash="f" * 64,
            status="done",
            created_at=dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC),
            finished_at=dt.datetime(2026, 12, 1, 9, 42, tzinfo=dt.UTC),
        )
        s.add(run)
        s.flush()
        # As the formalize role records them: rounds from 1, the passing round in the result.
        outcomes = {"item-a": 1, "item-b": 2, "item-c": 3, "item-d": None}
        for item, passed in outcomes.items():
            rounds = 3 if passed is None else passed
            for r in range(1, rounds + 1):
                s.add(
                    Attempt(
                        run_id=run.id,
                        item=item,
                        stage="generate",
                        round=r,
                        model="herald-translator@r1",
                        template_id="formalize.generate",
                        template_hash="t" * 64,
                        request={"messages": [{"role": "user", "content": f"formalize {item}"}]},
                        response={"content": f"theorem {item} : True := by trivial -- round {r}"},
                        tokens_in=100,
                        tokens_out=40,
                        duration_s=1.5,
                    )
                )
                s.add(
                    Attempt(
                        run_id=run.id,
                        item=item,
                        stage="compile",
                        round=r,
                        verdict="ok" if r == passed else "error",
                        error=None if r == passed else "unknown identifier 'foo'",
                    )
                )
            s.add(
                RunItem(
                    run_id=run.id,
                    item=item,
                    status="done" if passed is not None else "failed",
                    stage="compile",
                    attempt_count=2 * rounds,
                    error=None if passed is not None else "no round passed",
                    result={
                        "outcome": "passed" if passed else "failed",
                        "passed_round": passed,
                    },
                )
            )
        s.add(RunItem(run_id=run.id, item="item-e", status="pending"))
        agent = AgentText(
            kind="informal_statement",
            body=r"In a right triangle with legs $a, b$ and hypotenuse $c$, $a^2 + b^2 = c^2$.",
            source_text=m_new.statement,
            node_id=node.id,
            mention_id=m_new.id,
            item="item-a",
            run_id=run.id,
            model_id=model.id,
            template_id="informalize.statement",
            template_hash="a" * 64,
        )
        s.add(agent)
        s.flush()
        s.add_all(
            [
                CheckResultRow(
                    pair_key="p" * 64,
                    check="back_translation_nli",
                    checker="herald-translator@r1",
                    verdict="pass",
                    score=0.91,
                    agent_text_id=agent.id,
                ),
                CheckResultRow(
                    pair_key="p" * 64,
                    check="copy_check",
                    verdict="pass",
                    agent_text_id=agent.id,
                ),
            ]
        )
        samples = [
            AuditSample(
                audit="audit-1",
                role="formalize",
                library="minif2f",
                stratum="algebra",
                informal=r"Show that $2 + 2 = 4$.",
                formal="theorem two_add_two : (2 : ℕ) + 2 = 4 := by sorry",
                pair_key="s1" + "0" * 62,
            ),
            AuditSample(
                audit="audit-1",
                role="formalize",
                library="minif2f",
                stratum="number_theory",
                informal=r"Every prime $p$ satisfies $p \geq 2$.",
                formal="theorem prime_ge (p : ℕ) (hp : p.Prime) : 2 ≤ p := by sorry",
                pair_key="s2" + "0" * 62,
            ),
        ]
        s.add_all(samples)
        s.flush()
        return Seeded(
            node_id=node.id,
            xss_node_id=xss.id,
            agent_text_id=agent.id,
            binding_id=proposed.id,
            run_id=run.id,
            audit="audit-1",
            sample_ids=[x.id for x in samples],
        )
