"""Issue 41 §1, §4 through the formalize loop (the fake model server and the fake REPL): a model's
statement whose type Lean elaborates with a non-instance in instance position, or built on
`sorry` (`by stop`), never passes — the elaborated reading refuses what compiles, hygiene what
it can see — and the consistency judge is never asked about it; legitimate statements pass."""

from __future__ import annotations

import json

from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.formalize import FormalizeOptions, Outcome
from tests.lean.conftest import requests
from tests.lean.test_elaborated_checker import LEGIT, SPELLINGS, statement
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

REFUSED = {f"r{i}": statement(s) for i, s in enumerate(SPELLINGS.values())}
REFUSED["stop"] = statement("∀ n : ℕ, n < (by stop exact 0)")
PASSING = {f"n{i}": code for i, code in enumerate(LEGIT.values())}


def test_formalize_never_passes_what_lean_elaborated_wrongly(tmp_path, registered):  # noqa: F811
    cases = {**REFUSED, **PASSING}
    items = [{"id": k, "statement": f"CASE-{k}: a statement"} for k in cases]
    inp = tmp_path / "in.jsonl"
    write_items(inp, items)
    rules = [
        Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
        *(Rule(system=GENERATOR, user=f"CASE-{k}:", reply=lean(c)) for k, c in cases.items()),
        Rule(system=JUDGE, json=consistent()),
    ]
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules, models=["gen", "judge"])) as srv:
        st = settings_for(tmp_path, srv.base_url, repl_log)
        opts = FormalizeOptions(model="gen", judge="judge")
        formalize_unindexed(st, registered, inp, opts)
        asked = [r for r in srv.requests if r["rule"] == len(rules) - 1]  # the judge's rule
        judged = "\n".join(json.dumps(r["body"]) for r in asked)
    res = {k: v.result for k, v in results(registered).items()}
    for k in REFUSED:
        assert res[k]["outcome"] != Outcome.PASSED, (k, res[k]["rounds"])
        assert not any(x["compile_passed"] for x in res[k]["rounds"]), (k, res[k]["rounds"])
        assert f"CASE-{k}:" not in judged, k  # the judge never saw it
    for k in PASSING:
        assert res[k]["outcome"] == Outcome.PASSED, (k, cases[k], res[k]["rounds"])
        assert f"CASE-{k}:" in judged, k
    sent = "\n".join(requests(repl_log))
    assert "(by stop exact 0)" not in sent  # hygiene refused it before Lean
    assert "set_option pp.instanceTypes true in" in sent  # math2 asked what Lean elaborated
