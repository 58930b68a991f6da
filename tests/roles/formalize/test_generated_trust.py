"""A model's block is checked at the generated level: context that would change what the
statement means (an instance on ℕ, a hypothesis variable, a compiled-code helper) is refused in
every round, and none of it reaches Lean (the fake REPL's log)."""

from __future__ import annotations

from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.formalize import Outcome
from tests.lean.meaning_corpus import ALWAYS, MEANING, OPTION_BOMBS
from tests.roles.formalize.scripts import (
    GENERATOR,
    JUDGE,
    PLANNER,
    consistent,
    formalize_unindexed,
    lean,
    write_items,
)
from tests.roles.formalize.test_loop import registered, results, settings_for  # noqa: F401

CASES = {
    "lt": MEANING["LT on ℕ"][0],
    "ofnat": MEANING["OfNat ℕ 2"][0],
    "include": MEANING["variable False included"][0],
    "fact": MEANING["Fact instance variable"][0],
    "native": ALWAYS["native_decide helper"],
    "heartbeats": OPTION_BOMBS["maxHeartbeats 0"],
}


def _body(code: str) -> str:
    return code.removeprefix("import Mathlib\n")


def test_meaning_changers_from_a_model_never_reach_lean(tmp_path, registered):  # noqa: F811
    items = [{"id": k, "statement": f"CASE-{k}: a statement"} for k in CASES]
    inp = tmp_path / "in.jsonl"
    write_items(inp, items)
    rules = [
        Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
        *(Rule(system=GENERATOR, user=f"CASE-{k}", reply=lean(_body(c))) for k, c in CASES.items()),
        Rule(system=JUDGE, json=consistent()),
    ]
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules, models=["gen", "judge"])) as srv:
        st = settings_for(tmp_path, srv.base_url, repl_log)
        formalize_unindexed(st, registered, inp)
    res = {k: v.result for k, v in results(registered).items()}
    assert set(res) == set(CASES)
    for k, r in res.items():
        assert r["outcome"] == Outcome.REFUSED, k
        assert {x["compile_status"] for x in r["rounds"]} == {"rejected"}, (k, r["rounds"])
    sent = repl_log.read_text() if repl_log.exists() else ""
    assert "theorem foo" not in sent
