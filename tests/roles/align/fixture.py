"""A small store for the align tests: Mathlib, set.mm, a matching dataset and an AI library."""

from __future__ import annotations

from dataclasses import dataclass

from math2.llm import add_model
from math2.llm.testing import Rule, Script
from math2.store import Store
from math2.store.models import Binding, Crosswalk, Mention, Node, Source
from tests.seeding import add_pin, add_source, mention_of, record_library_import

JUDGE = "compare two mathematical statements"


def same(reason: str = "the same result") -> dict:
    return {"verdict": "same", "reasons": reason, "differing_clauses": []}


def verdict(v: str, reason: str, clauses: list[str], direction: str | None = None) -> dict:
    out = {"verdict": v, "reasons": reason, "differing_clauses": clauses}
    return out | ({"direction": direction} if direction else {})


def script(latency_s: float = 0.0) -> Script:
    """SAME_k → same, IMPL_k → implies, DIFF_k → different, GARB_k → no JSON at all."""
    return Script(
        models=["judge"],
        latency_s=latency_s,
        rules=[
            Rule(system=JUDGE, user=r"Lean\.SAME", json=same("both state commutativity")),
            Rule(
                system=JUDGE,
                user=r"Lean\.IMPL",
                json=verdict(
                    "implies", "the Lean side is a special case", ["n = 0"], "left_implies_right"
                ),
            ),
            Rule(
                system=JUDGE,
                user=r"Lean\.DIFF",
                json=verdict("different", "one is about sums, one about products", ["a * b"]),
            ),
            Rule(system=JUDGE, user=r"Lean\.GARB", reply="I cannot say."),
        ],
    )


def _source(s, name: str, system: str, kind: str = "library", authored: str = "human") -> Source:
    src = add_source(s, name, system=system, kind=kind, authored=authored)
    pin = add_pin(s, src, "v1")
    if kind == "library" and system == "lean4":  # as `math2 import` leaves it
        record_library_import(s, src, pin)
    return src


def mention(s, src: Source, name: str, statement: str, kind: str = "theorem", **kw) -> Mention:
    m = mention_of(src, src.pins[0], name, kind=kind, module="Test", statement=statement, **kw)
    s.add(m)
    s.flush()
    return m


@dataclass
class Built:
    pairs: dict[str, int]  # item kind + index -> crosswalk id
    other: int  # a candidate of another dataset, never judged


def build(store: Store, n: int = 2) -> Built:
    """n candidates of each kind (SAME, IMPL, DIFF, GARB) from `theoremgraph`, one from `other`."""
    with store.session() as s:
        add_model(s, "judge")
    with store.session() as s:
        mathlib = _source(s, "mathlib", "lean4")
        setmm = _source(s, "setmm", "metamath")
        tg = _source(s, "theoremgraph", "lean4", kind="dataset")
        other = _source(s, "stacks-mathlib", "lean4", kind="dataset")
        pairs: dict[str, int] = {}
        for kind in ("SAME", "IMPL", "DIFF", "GARB"):
            for i in range(n):
                lean = f"Lean.{kind}.t{i}"
                mention(s, mathlib, lean, f"theorem {lean} (a b : ℕ) : a + b = b + a")
                node = Node(key=f"setmm:{kind.lower()}{i}", title=f"{kind} result {i}")
                s.add(node)
                s.flush()
                mention(
                    s,
                    setmm,
                    f"{kind.lower()}{i}",
                    "|- ( ( A e. CC /\\ B e. CC ) -> ( A + B ) = ( B + A ) )",
                    docstring="Commutative law of addition.",
                    node_id=node.id,
                )
                cw = Crosswalk(
                    node_id=node.id,
                    system="lean4",
                    target=lean,
                    source_id=tg.id,
                    status="candidate",
                )
                s.add(cw)
                s.flush()
                pairs[f"{kind}{i}"] = cw.id
        node = Node(key="stacks:0001", title="a stacks tag")
        s.add(node)
        s.flush()
        cw = Crosswalk(
            node_id=node.id,
            system="lean4",
            target="Lean.SAME.t0",
            source_id=other.id,
            status="candidate",
        )
        s.add(cw)
        s.flush()
        return Built(pairs, cw.id)


def ai_library(store: Store) -> dict[str, int]:
    """An AI-written library: two definitions and a theorem that uses both; a bound node."""
    with store.session() as s:
        ai = _source(s, "ai-lib", "lean4", authored="ai")
        foo = mention(s, ai, "AiLib.Foo", "def AiLib.Foo (n : ℕ) : ℕ := n + 1", kind="def")
        bar = mention(s, ai, "AiLib.Bar", "def AiLib.Bar : Prop := True", kind="def")
        thm = mention(
            s, ai, "AiLib.foo_pos", "theorem AiLib.foo_pos (n : ℕ) : 0 < AiLib.Foo n ∧ AiLib.Bar"
        )
        node = Node(key="ai:foo_pos", title="Foo is positive")
        s.add(node)
        s.flush()
        b = Binding(node_id=node.id, mention_id=thm.id, status="checked")
        s.add(b)
        s.flush()
        return {"foo": foo.id, "bar": bar.id, "thm": thm.id, "binding": b.id, "node": node.id}
