"""The harness end to end: fake model server over HTTP, fake Lean REPL, real store."""

from __future__ import annotations

import asyncio
import json
from functools import partial

import pytest
from sqlalchemy import delete, select

from math2.eval import (
    SampleFailure,
    collect_results,
    load_harness_jsonl,
    render_table,
    score,
    shared_registry,
    version_from_items,
    write_report,
)
from math2.eval.harness import EvalOptions, run_eval
from math2.eval.report import read_html_scores, read_png_scores
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.store.work import RunItem
from tests.conftest import benchmark_fixtures
from tests.settings import settings_for

GENERATOR = "translate mathematical statements"
REPL_RULES = ["Evn 2=>error unknown_identifier Evn"]
settings_for = partial(settings_for, rules=REPL_RULES, db="math2.db")


def lean(code: str) -> str:
    return f"Here it is.\n```lean\n{code}\n```"


OK = {"consistent": True, "defects": []}
BAD = {"consistent": False, "defects": [{"kind": "changed_condition", "clause": "2 = 2"}]}


def script() -> Script:
    return Script(
        rules=[
            Rule(
                system=GENERATOR,
                user="ALPHAEVAL",
                replies=[
                    lean("theorem a1 : 1 + 1 = 2 := by sorry"),
                    lean("theorem a2 : 2 = 2 := by sorry"),
                    lean("theorem a3 : Evn 2 := by sorry"),
                    "I cannot do this.",
                ],
            ),
            Rule(system=GENERATOR, user="BETAEVAL", reply=lean("theorem b1 : True := by sorry")),
            Rule(system=GENERATOR, reply=lean("theorem other : True := by sorry")),
            Rule(model="^j1$", user="theorem a2", json=BAD),
            Rule(model="^j1$", json=OK),
            Rule(model="^j2$", user="theorem b1|could not be read", reply="no idea {not json"),
            Rule(model="^j2$", json=OK),
        ]
    )


@pytest.fixture
def registered(sqlite_store):
    with sqlite_store.session() as s:
        for m in ("gen", "j1", "j2"):
            add_model(s, m, provider="fake")
    return sqlite_store


def _synthetic(tmp_path):
    rows = [
        {
            "name": "alpha",
            "problem": "ALPHAEVAL: one plus one is two.",
            "header": "import Mathlib\nopen Nat",
            "ground_truth": "theorem alpha : 1 + 1 = 2 := by sorry",
            "benchmark_name": "Toy",
            "extra": [1, 2],
        },
        {
            "name": "beta",
            "problem": "BETAEVAL: truth holds.",
            "header": "import Mathlib",
            "ground_truth": "theorem beta : True := by sorry",
            "benchmark_name": "Toy",
        },
    ]
    p = tmp_path / "toy.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return version_from_items("toy", "v1", load_harness_jsonl(p)["Toy"])


def test_sc_cc_of_a_synthetic_run_equal_hand_computed_values(tmp_path, registered):
    toy = _synthetic(tmp_path)
    opts = EvalOptions(model="gen", judges=["j1", "j2"], k=4)
    with FakeServer(script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        summary, samples = asyncio.run(run_eval(st, registered, [toy], opts))
        first = len(srv.requests)
        # resumed: nothing is asked again
        _, samples2 = asyncio.run(run_eval(st, registered, [toy], opts))
        assert len(srv.requests) == first
    assert summary.done == 8 and summary.failed == 0
    assert sorted(s.model_dump_json() for s in samples) == sorted(
        s.model_dump_json() for s in samples2
    )
    sc = score(samples, ks=[1, 2, 4], model="gen", resamples=200)
    (b,) = sc.benchmarks
    assert b.version_hash == toy.version_hash
    # alpha: a1, a2 compile; a3 fails in Lean; one reply has no Lean. j1: a1 only; j2: a1, a2
    assert b.per_item["alpha"] == {"n": 4, "compiled": 2, "consistent": {"j1": 1, "j2": 2}}
    # beta: all compile; j1 says consistent; j2's answer is unreadable: never a pass
    assert b.per_item["beta"] == {"n": 4, "compiled": 4, "consistent": {"j1": 4, "j2": 0}}
    assert b.sc[1].value == pytest.approx((0.5 + 1.0) / 2)
    assert b.sc[2].value == pytest.approx((5 / 6 + 1.0) / 2)
    assert b.cc["j1"][1].value == pytest.approx((0.25 + 1.0) / 2)
    assert b.cc["j1"][2].value == pytest.approx((0.5 + 1.0) / 2)
    assert b.cc["j2"][1].value == pytest.approx((0.5 + 0.0) / 2)
    assert b.cc["j2"][4].value == pytest.approx(0.5)
    # κ on the 6 compiled samples: j1 = T,F,T,T,T,T ; j2 = T,T,F,F,F,F -> po 1/6, pe 7/18
    assert b.kappa["j1|j2"] == pytest.approx(-4 / 11)
    # k different generator calls per item (the sample index is in the cache key)
    gen_calls = [r for r in srv.requests if r["body"]["model"] == "gen"]
    assert len(gen_calls) == 8


def test_shared_benchmarks_end_to_end_with_report(tmp_path, registered):
    reg = shared_registry(benchmark_fixtures())
    versions = [reg.get("minif2f-test"), reg.get("fate-m")]
    opts = EvalOptions(model="gen", judges=["j1", "j2"], k=2, limit=3)
    with FakeServer(script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        summary, samples = asyncio.run(run_eval(st, registered, versions, opts))
    assert summary.done == 12 and len(samples) == 12
    scores = score(samples, ks=[1, 2], model="gen", resamples=100)
    assert {b.benchmark for b in scores.benchmarks} == {"minif2f-test", "fate-m"}
    assert {b.version_hash for b in scores.benchmarks} == {v.version_hash for v in versions}
    # every sample compiles ("theorem other : True") and both judges accept it
    assert scores.macro_sc[2].value == 1.0 and scores.macro_cc["j1"][2].value == 1.0
    files = write_report(scores, tmp_path / "report")
    assert read_html_scores(files["html"]) == scores == read_png_scores(files["bars"])
    # the report names the Lean that compiled, and says that a double is not Lean
    assert scores.compiled_by and all(c.startswith("fake-repl") for c in scores.compiled_by)
    table = files["table"].read_text()
    assert "compiled by: fake-repl" in table and "not Lean" in table
    for key in ("json", "html"):
        assert "fake-repl" in files[key].read_text()


def test_full_loop_mode_refines_each_sample(tmp_path, registered):
    """--loop: each sample goes through the formalize loop; compile feedback is used, and the
    k samples ask their own questions."""
    toy = _synthetic(tmp_path)
    loop_script = Script(
        rules=[
            Rule(
                system=GENERATOR,
                user=r"ALPHAEVAL.*round 1\)",
                reply=lean("theorem a1 : 1 + 1 = 2 := by sorry"),
            ),
            Rule(system=GENERATOR, user="ALPHAEVAL", reply=lean("theorem a3 : Evn 2 := by sorry")),
            Rule(system=GENERATOR, user="BETAEVAL", reply=lean("theorem b1 : True := by sorry")),
            Rule(json=OK),
        ]
    )
    with FakeServer(loop_script) as srv:
        st = settings_for(tmp_path, srv.base_url)
        once = EvalOptions(model="gen", judges=["j1", "j2"], k=2)
        _, single = asyncio.run(run_eval(st, registered, [toy], once))
        looped = EvalOptions(model="gen", judges=["j1", "j2"], k=2, loop=True, max_rounds=2)
        _, loop_samples = asyncio.run(run_eval(st, registered, [toy], looped))
        alpha_gen = [
            r
            for r in srv.requests
            if r["body"]["model"] == "gen" and "ALPHAEVAL" in r["body"]["messages"][-1]["content"]
        ]
    single_alpha = [s for s in single if s.item == "alpha"]
    loop_alpha = [s for s in loop_samples if s.item == "alpha"]
    assert not any(s.compiled for s in single_alpha)
    assert all(s.compiled and s.judges == {"j1": True, "j2": True} for s in loop_alpha)
    assert "a1" in loop_alpha[0].statement
    # 2 single-shot samples (round 1), then 2 loop samples × 2 rounds; round 1 of loop sample s
    # is the single-shot call of sample s, answered from the cache
    assert len(alpha_gen) == 4


def test_a_crashed_sample_is_a_failure_at_its_index_and_k_is_unchanged(tmp_path, registered):
    """The model crashes on every sample of `gamma`: those samples are scored, as failures with
    their reason, at their indexes; k is what was asked; nothing is dropped."""
    rows = [
        {
            "name": "alpha",
            "problem": "BETAEVAL: truth.",
            "ground_truth": "theorem t : True := by sorry",
            "benchmark_name": "T",
        },
        {
            "name": "gamma",
            "problem": "CRASHEVAL: x.",
            "ground_truth": "theorem t : True := by sorry",
            "benchmark_name": "T",
        },
    ]
    p = tmp_path / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    toy = version_from_items("t", "v1", load_harness_jsonl(p)["T"])
    crash = Script(
        rules=[
            Rule(system=GENERATOR, user="CRASHEVAL", status=500),
            *script().rules,
        ]
    )
    opts = EvalOptions(model="gen", judges=["j1"], k=2)
    with FakeServer(crash) as srv:
        st = settings_for(tmp_path, srv.base_url)
        st.llm.max_retries = 0
        summary, samples = asyncio.run(run_eval(st, registered, [toy], opts))
    assert summary.failed == 2
    gamma = sorted((s for s in samples if s.item == "gamma"), key=lambda s: s.sample)
    assert [s.sample for s in gamma] == [0, 1]
    assert all(s.failure is SampleFailure.ERROR and "500" in s.error for s in gamma)
    sc = score(samples, ks=[1, 2], model="gen", resamples=50)
    (b,) = sc.benchmarks
    assert b.per_item["gamma"]["n"] == 2 and b.samples_per_item == 2
    assert b.failed == 2 and b.failures == {"error": 2} and b.samples == 4
    # alpha passes everything, gamma is 0: the crash is not dropped from the mean
    assert b.sc[2].value == pytest.approx(0.5)
    assert "2/4 (error 2)" in render_table(sc)


def test_a_sample_never_tried_is_counted_not_run(tmp_path, registered):
    toy = _synthetic(tmp_path)
    opts = EvalOptions(model="gen", judges=["j1"], k=2)
    with FakeServer(script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        summary, _ = asyncio.run(run_eval(st, registered, [toy], opts))
    with registered.session() as s:  # as if the run had been killed before this sample
        s.execute(delete(RunItem).where(RunItem.item == "toy/beta/1"))
        row = s.scalar(select(RunItem).where(RunItem.item == "toy/alpha/0"))
        row.result = {"benchmark": "toy", "garbage": True}  # a stored result that cannot be read
        s.commit()
    samples = collect_results(registered, summary.run_id)
    assert len(samples) == 4
    (lost,) = [x for x in samples if x.failure is SampleFailure.NOT_RUN]
    assert (lost.item, lost.sample) == ("beta", 1)
    (bad,) = [x for x in samples if x.failure is SampleFailure.UNREADABLE]
    assert (bad.item, bad.sample) == ("alpha", 0)
    (b,) = score(samples, ks=[2], resamples=10).benchmarks
    assert b.per_item["beta"] == {"n": 2, "compiled": 1, "consistent": {"j1": 1}}
    assert b.failures == {"not_run": 1, "unreadable": 1}


def test_a_models_meaning_changer_fails_the_sample_and_never_reaches_lean(tmp_path, registered):
    """Eval checks the model's output at the generated level: an instance on ℕ in the reply is
    refused before Lean (the fake REPL's log), and the sample counts as not compiled."""
    from tests.lean.meaning_corpus import MEANING

    evil = MEANING["LT on ℕ"][0].removeprefix("import Mathlib\n")
    rules = [
        Rule(system=GENERATOR, user="ALPHAEVAL", reply=lean(evil)),
        Rule(system=GENERATOR, reply=lean("theorem other : True := by sorry")),
        Rule(json=OK),
    ]
    toy = _synthetic(tmp_path)
    log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules)) as srv:
        st = settings_for(tmp_path, srv.base_url)
        st.lean.repl_command = [*st.lean.repl_command, "--log", str(log)]
        opts = EvalOptions(model="gen", judges=["j1"], k=1)
        _, samples = asyncio.run(run_eval(st, registered, [toy], opts))
    sc = score(samples, ks=[1], model="gen", resamples=50)
    (b,) = sc.benchmarks
    assert b.per_item["alpha"]["compiled"] == 0
    assert b.per_item["beta"]["compiled"] == 1
    # a refusal is a failure with its reason, in the table's "failed (why)" column
    assert b.failures == {"refused": 1} and "1/2 (refused 1)" in render_table(sc)
    (refused,) = [x for x in samples if x.failure is SampleFailure.REFUSED]
    assert refused.item == "alpha" and refused.error and refused.compiled_by == ""
    sent = log.read_text() if log.exists() else ""
    assert "instance : LT" not in sent and "theorem other" in sent


def test_a_dead_generator_stops_the_samples_instead_of_scoring_them(tmp_path, registered):
    # Once the endpoint is down, the sample step lets EndpointDown out: no sample is `done`
    # (so none is scored as an ordinary miss) and the run can be resumed (issue 34 §5).
    from tests.llm.dead import dead_settings, met_endpoint_down, run_until_down

    toy = _synthetic(tmp_path)
    opts = EvalOptions(model="gen", judges=["j1"], k=4)
    st = dead_settings(settings_for(tmp_path, "http://unused/v1"))
    run_until_down(lambda: run_eval(st, registered, [toy], opts))
    met_endpoint_down(registered, done_before=0)


HOSTILE = (
    'theorem h : True := by sorry\n#eval IO.Process.run { cmd := "sh", args := #["-c", "id"] }'
)
CUT = "theorem c : 1 + 1 = 2 := by norm_num -- " + "x" * 400  # cut off after a few tokens


@pytest.mark.parametrize("loop", [False, True])
def test_a_cut_reply_is_a_timeout_and_a_refusal_is_refused(tmp_path, registered, loop):
    """A reply cut off at its deadline (finish_reason "timeout") counts as `timeout`, not
    `no_lean`; a block hygiene refuses counts as `refused` — single-shot and through the loop,
    and the table's "failed (why)" column says so (issue 34 §5)."""
    rules = [
        Rule(system=GENERATOR, user="ALPHAEVAL", reply=lean(CUT), stall_after=3),
        Rule(system=GENERATOR, user="BETAEVAL", reply=lean(HOSTILE)),
        Rule(json=OK),
    ]
    toy = _synthetic(tmp_path)
    log = tmp_path / "repl.jsonl"
    with FakeServer(Script(rules=rules)) as srv:
        st = settings_for(tmp_path, srv.base_url)
        st.llm.timeout_s, st.llm.timeout_floor_s, st.llm.max_retries = 1.0, 0.3, 0
        st.lean.repl_command = [*st.lean.repl_command, "--log", str(log)]
        opts = EvalOptions(model="gen", judges=["j1"], k=1, loop=loop, max_rounds=1)
        summary, samples = asyncio.run(run_eval(st, registered, [toy], opts))
    assert summary.failed == 0
    by_item = {x.item: x for x in samples}
    assert by_item["alpha"].failure is SampleFailure.TIMEOUT and not by_item["alpha"].compiled
    assert by_item["beta"].failure is SampleFailure.REFUSED and not by_item["beta"].compiled
    sc = score(samples, ks=[1], model="gen", resamples=20)
    (b,) = sc.benchmarks
    assert b.failures == {"refused": 1, "timeout": 1} and b.sc[1].value == 0.0
    assert "2/2 (refused 1, timeout 1)" in render_table(sc)
    assert "IO.Process" not in (log.read_text() if log.exists() else "")
