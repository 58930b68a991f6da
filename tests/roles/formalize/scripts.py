"""Scripts for the fake model server: planner, generator and judge for six kinds of items."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from math2.config import Settings
from math2.llm.testing import Rule, Script
from math2.roles.formalize import FormalizeOptions, run_formalize
from math2.runs import RunSummary
from math2.store import Store

PLANNER = "retrieval planner"
GENERATOR = "translate mathematical statements"
JUDGE = "check whether a Lean 4 statement"
GEN_JUDGE = FormalizeOptions(model="gen", judge="judge")


def lean(code: str) -> str:
    return f"Here it is.\n```lean\n{code}\n```"


def consistent() -> dict:
    return {"consistent": True, "defects": []}


def defect(kind: str, clause: str) -> dict:
    return {"consistent": False, "defects": [{"kind": kind, "clause": clause}]}


# One statement per behaviour; the generator's reply depends on the round it is asked in.
ITEMS = [
    {"id": "alpha", "statement": "ALPHA: one plus one is two."},
    {"id": "beta", "statement": "BETA: two is even."},
    {"id": "gamma", "statement": "GAMMA: every prime above two is odd."},
    {"id": "delta", "statement": "DELTA: a statement that never compiles."},
    {"id": "epsilon", "statement": "EPSILON: a statement answered with hostile code."},
    {"id": "zeta", "statement": "ZETA: a statement whose judge answers garbage."},
]

HOSTILE = (
    'theorem eps : True := by sorry\n#eval IO.Process.run { cmd := "sh", args := #["-c", "id"] }'
)


def formalize_script(latency_s: float = 0.0) -> Script:
    rules = [
        Rule(system=PLANNER, user="GAMMA", json={"search": True, "queries": ["Nat.Prime.odd"]}),
        Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
        Rule(system=GENERATOR, user="ALPHA", reply=lean("theorem alpha : 1 + 1 = 2 := by sorry")),
        Rule(
            system=GENERATOR,
            user=r"BETA.*round 1\)",
            reply=lean("theorem beta : Even 2 := by sorry"),
        ),
        Rule(
            system=GENERATOR,
            user="BETA",
            reply=lean("theorem beta : Evn 2 := by sorry"),
        ),
        Rule(
            system=GENERATOR,
            user=r"GAMMA.*round 2\)",
            reply=lean("theorem gamma3 (p : ℕ) (hp : p.Prime) (h : 2 < p) : Odd p := by sorry"),
        ),
        Rule(
            system=GENERATOR,
            user=r"GAMMA.*round 1\)",
            reply=lean("theorem gamma2 (p : ℕ) (hp : p.Prime) : Odd p := by sorry"),
        ),
        Rule(
            system=GENERATOR,
            user="GAMMA",
            reply=lean("theorem gamma1 (p : ℕ) : Odd p := by sorry"),
        ),
        Rule(
            system=GENERATOR,
            user="DELTA",
            reply=lean("theorem delta : (1 : ℕ) = 1 := by sorry"),
        ),
        Rule(system=GENERATOR, user="EPSILON", reply=lean(HOSTILE)),
        Rule(system=GENERATOR, user="ZETA", reply=lean("theorem zeta : True := by sorry")),
        Rule(
            system=JUDGE,
            user="gamma1",
            json=defect("missing_precondition", "every prime above two"),
        ),
        Rule(system=JUDGE, user="gamma2", json=defect("missing_precondition", "above two")),
        Rule(system=JUDGE, user="zeta|could not be read", reply="I think it is fine {not json"),
        Rule(system=JUDGE, json=consistent()),
    ]
    return Script(rules=rules, latency_s=latency_s, models=["gen", "judge"])


def write_items(path, items=ITEMS) -> None:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")


# What the fake REPL answers with an error (math2 compiles code without its comments).


def formalize_unindexed(
    settings: Settings,
    store: Store,
    input_path: Path,
    options: FormalizeOptions = GEN_JUDGE,
) -> RunSummary:
    """Run formalize to its end on a store with no search index: the tests' stores import no
    library, so the run's own index check (`require_index`) is the one thing turned off."""
    return asyncio.run(run_formalize(settings, store, input_path, options, require_index=False))
