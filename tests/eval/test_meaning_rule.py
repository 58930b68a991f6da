"""Issue 34 through the eval harness (the fake model server and the fake REPL): a sample whose
Lean changes the environment beyond its target is not compiled and never reaches Lean (the
REPL's log); samples named as Lean prints names (`mul_inv_cancel'`, `«two plus two»`) and
blocks of objects and classes over them compile."""

from __future__ import annotations

import asyncio
import json

from math2.eval import load_harness_jsonl, score, version_from_items
from math2.eval.harness import EvalOptions, run_eval
from math2.llm.testing import FakeServer, Rule, Script
from tests.eval.test_harness import GENERATOR, OK, lean, registered, settings_for  # noqa: F401
from tests.lean.conftest import requests
from tests.lean.issue34_corpus import GENERATED_ACCEPTED, GENERATED_REFUSED, NAMED
from tests.lean.test_library_tables import CHANGED, FLAGGED, LEGIT

REFUSED = {f"r{i}": c for i, c in enumerate(GENERATED_REFUSED.values()) if len(c) < 50_000}
# issue 41 §2: the cases that change meaning through the library's classes, names and scoped
# instances (refused with the fixture library's tables, `library_tables`)
REFUSED.update({f"c{i}": code for i, (code, _) in enumerate(CHANGED.values())})
# issue 41 §3: a person's context (renaming/hiding, notation with attributes, shadowing,
# instances) in a model's block: refused (flagged only at the benchmark level)
REFUSED.update({f"f{i}": code for i, (code, *_) in enumerate(FLAGGED.values())})
PASSING = {f"n{i}": c for i, c in enumerate([*NAMED.values(), *GENERATED_ACCEPTED.values()])}
# the legitimate shapes of issue 41 (`variable {G : Type*} [Group G] (g h : G)`, `{f : D → ℝ}`)
PASSING.update({f"l{i}": code for i, code in enumerate(LEGIT.values())})


def _body(code: str) -> str:
    return code.removeprefix("import Mathlib\n")


def test_eval_refuses_meaning_changers_and_compiles_printed_names(
    tmp_path,
    registered,  # noqa: F811
    library_tables,  # the fixture library's tables (tests/conftest.py)
):
    cases = {**REFUSED, **PASSING}
    rows = [
        {
            "name": k,
            "problem": f"CASE-{k}: a statement.",
            "header": "import Mathlib",
            "ground_truth": "theorem gt : True := by sorry",
            "benchmark_name": "Toy",
        }
        for k in cases
    ]
    p = tmp_path / "toy.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    toy = version_from_items("toy", "v1", load_harness_jsonl(p)["Toy"])
    rules = [
        *(
            Rule(system=GENERATOR, user=f"CASE-{k}:", reply=lean(_body(c)))
            for k, c in cases.items()
        ),
        Rule(json=OK),
    ]
    log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules)) as srv:
        st = settings_for(tmp_path, srv.base_url)
        st.lean.repl_command = [*st.lean.repl_command, "--log", str(log)]
        opts = EvalOptions(model="gen", judges=["j1"], k=1)
        _, samples = asyncio.run(run_eval(st, registered, [toy], opts))
    (b,) = score(samples, ks=[1], model="gen", resamples=20).benchmarks
    for k in REFUSED:
        assert b.per_item[k]["compiled"] == 0, k
    for k in PASSING:
        assert b.per_item[k]["compiled"] == 1, (k, cases[k])
    sent = "\n".join(requests(log))
    for code in REFUSED.values():
        assert _body(code)[:60] not in sent
    assert "mul_inv_cancel'" in sent and "«two plus two»" in sent
