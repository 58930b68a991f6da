"""Issue 34 through the formalize loop (the fake model server and the fake REPL): a model's block
that changes the environment beyond its target is refused in every round and never reaches Lean
(the REPL's log); theorems named as Lean prints names (`mul_inv_cancel'`, `«two plus two»`) and
blocks of objects and classes over them pass."""

from __future__ import annotations

from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.formalize import FormalizeOptions, Outcome
from tests.lean.conftest import requests
from tests.lean.issue34_corpus import GENERATED_ACCEPTED, GENERATED_REFUSED, NAMED
from tests.lean.test_library_tables import CHANGED, FLAGGED, LEGIT
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

REFUSED = {f"r{i}": code for i, code in enumerate(GENERATED_REFUSED.values())}
# issue 41 §2: the cases that change meaning through the library's classes, names and scoped
# instances (refused with the fixture library's tables, `library_tables`)
REFUSED.update({f"c{i}": code for i, (code, _) in enumerate(CHANGED.values())})
# issue 41 §3: a person's context (renaming/hiding, notation with attributes, shadowing,
# instances) in a model's block: refused (flagged only at the benchmark level)
REFUSED.update({f"f{i}": code for i, (code, *_) in enumerate(FLAGGED.values())})


def _body(code: str) -> str:
    return code.removeprefix("import Mathlib\n")


PASSING = {f"n{i}": code for i, code in enumerate([*NAMED.values(), *GENERATED_ACCEPTED.values()])}
# the legitimate shapes of issue 41 (`variable {G : Type*} [Group G] (g h : G)`, `{f : D → ℝ}`)
PASSING.update({f"l{i}": code for i, code in enumerate(LEGIT.values())})


def test_formalize_refuses_meaning_changers_and_passes_printed_names(
    tmp_path,
    registered,  # noqa: F811
    library_tables,  # the fixture library's tables (tests/conftest.py)
):
    cases = {**REFUSED, **PASSING}
    items = [{"id": k, "statement": f"CASE-{k}: a statement"} for k in cases]
    inp = tmp_path / "in.jsonl"
    write_items(inp, items)
    rules = [
        Rule(system=PLANNER, json={"search": False, "queries": [], "reason": "simple"}),
        *(
            Rule(system=GENERATOR, user=f"CASE-{k}:", reply=lean(_body(c)))
            for k, c in cases.items()
        ),
        Rule(system=JUDGE, json=consistent()),
    ]
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules, models=["gen", "judge"])) as srv:
        st = settings_for(tmp_path, srv.base_url, repl_log)
        opts = FormalizeOptions(model="gen", judge="judge")
        formalize_unindexed(st, registered, inp, opts)
    res = {k: v.result for k, v in results(registered).items()}
    assert set(res) == set(cases)
    for k, code in REFUSED.items():
        if len(code) > 50_000:  # the deep nesting: cut at the reply's token limit, no Lean block
            assert res[k]["outcome"] in (Outcome.REFUSED, Outcome.NO_LEAN), k
            continue
        assert res[k]["outcome"] == Outcome.REFUSED, (k, res[k]["rounds"])
        assert {x["compile_status"] for x in res[k]["rounds"]} == {"rejected"}, k
    for k in PASSING:
        assert res[k]["outcome"] == Outcome.PASSED, (k, cases[k], res[k]["rounds"])
    sent = "\n".join(requests(repl_log))
    for code in REFUSED.values():
        assert _body(code)[:60] not in sent
    assert "mul_inv_cancel'" in sent and "«two plus two»" in sent
