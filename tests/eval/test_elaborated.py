"""Issue 41 §1, §4 through the eval harness (the fake model server and the fake REPL): a sample
whose type Lean elaborates with a non-instance in instance position, or built on `sorry`, is not
compiled — the elaborated reading refuses it after Lean answered math2's own commands, hygiene
refuses `stop` before Lean — and legitimate samples compile."""

from __future__ import annotations

import asyncio
import json

from math2.eval import load_harness_jsonl, score, version_from_items
from math2.eval.harness import EvalOptions, run_eval
from math2.llm.testing import FakeServer, Rule, Script
from tests.eval.test_harness import GENERATOR, OK, lean, registered, settings_for  # noqa: F401
from tests.lean.conftest import requests
from tests.lean.test_elaborated_checker import LEGIT, SPELLINGS, statement

REFUSED = {f"r{i}": statement(s) for i, s in enumerate(SPELLINGS.values())}
REFUSED["stop"] = statement("∀ n : ℕ, n < (by stop exact 0)")
PASSING = {f"n{i}": code for i, code in enumerate(LEGIT.values())}


def test_eval_does_not_compile_what_lean_elaborated_wrongly(tmp_path, registered):  # noqa: F811
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
        *(Rule(system=GENERATOR, user=f"CASE-{k}:", reply=lean(c)) for k, c in cases.items()),
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
    assert "(by stop exact 0)" not in sent
    assert "set_option pp.instanceTypes true in" in sent
