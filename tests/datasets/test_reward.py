"""r(x, y) = compile(y) ∧ consistent(x, y): batched, cached, with the trainers' signatures."""

from __future__ import annotations

import inspect

import pytest

from math2.datasets import reward as rw
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from tests.eval.test_harness import settings_for


def lean(code: str) -> str:
    return f"Thinking...\n```lean\n{code}\n```"


X = "ALPHAEVAL: one plus one is two."
HOSTILE = 'theorem h : True := by sorry\n#eval IO.Process.run { cmd := "sh", args := #["id"] }'


def _script():
    return Script(
        rules=[
            Rule(
                model="^j1$",
                user="theorem wrong",
                json={
                    "consistent": False,
                    "defects": [{"kind": "inconsistent_conclusion", "clause": "two"}],
                },
            ),
            Rule(model="^j1$", user="theorem garbled|could not be read", reply="{oops"),
            Rule(model="^j1$", json={"consistent": True, "defects": []}),
        ]
    )


@pytest.fixture
def reward(tmp_path, sqlite_store):
    with sqlite_store.session() as s:
        add_model(s, "j1", provider="fake")
    with FakeServer(_script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        r = rw.FormalizationReward(st, sqlite_store, "j1")
        yield r, srv
        rw.configure(None)
        r.close()


def test_reward_values_and_cache(reward):
    r, srv = reward
    pairs = [
        (X, lean("theorem good : 1 + 1 = 2 := by sorry")),  # compiles, consistent
        (X, lean("theorem wrong : 1 + 1 = 3 := by sorry")),  # compiles, judged inconsistent
        (X, lean("theorem bad : Evn 2 := by sorry")),  # does not compile
        (X, "no lean here"),  # nothing to compile
        (X, lean(HOSTILE)),  # refused by hygiene, never reaches Lean
        (X, lean("theorem garbled : 2 = 2 := by sorry")),  # unreadable verdict: never a pass
    ]
    assert r.score_batch(pairs) == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    details = list(r.details.values())
    assert any(d.get("status") == "rejected" for d in details)
    n = len(srv.requests)
    assert r.score_batch(pairs[:2]) == [1.0, 0.0] and len(srv.requests) == n  # memo
    # a fresh reward over the same store answers from the response and Lean caches
    r2 = rw.FormalizationReward(r.settings, r.store, "j1")
    assert r2.score_batch(pairs[:2]) == [1.0, 0.0] and len(srv.requests) == n
    r2.close()


def test_the_process_holds_one_pool_writer_and_client_across_1000_calls(
    tmp_path, sqlite_store, monkeypatch
):
    """verl calls compute_score once per sample: the Lean pool, the store writer and the HTTP
    client are made once for all 1,000 calls, and the memo stays within its bound."""
    made = {"services": 0, "store": 0}

    def counting(name, fn):
        def make(*a, **kw):
            made[name] += 1
            return fn(*a, **kw)

        return make

    # the role services (the Lean checker and the judge's client) come from the one factory
    monkeypatch.setattr(rw, "build_services", counting("services", rw.build_services))
    monkeypatch.setattr(rw, "AsyncStore", counting("store", rw.AsyncStore))
    with sqlite_store.session() as s:
        add_model(s, "j1", provider="fake")
    with FakeServer(_script()) as srv:
        r = rw.FormalizationReward(settings_for(tmp_path, srv.base_url), sqlite_store, "j1")
        r.memo = type(r.memo)(maxsize=64)
        rw.configure(r)
        try:
            scores = []
            for i in range(1000):
                answer = (
                    lean(f"theorem t{i} : {i} + 1 = {i + 1} := by sorry")
                    if i % 10 == 0
                    else f"no lean, attempt {i}"
                )
                scores.append(rw.compute_score("math2", answer, X))
            assert made == {"services": 1, "store": 1}
            held = r._services.services
            assert list(held.clients) == ["j1"] and held.checker is not None
            assert scores.count(1.0) == 100 and len(r.memo) <= 64
            judged = [q for q in srv.requests if q["body"]["model"] == "j1"]
            assert len(judged) == 100
            # an answer evicted from the memo is answered again, from the store's caches
            assert rw.compute_score("math2", lean("theorem t0 : 0 + 1 = 1 := by sorry"), X) == 1.0
            assert len([q for q in srv.requests if q["body"]["model"] == "j1"]) == 100
        finally:
            rw.configure(None)
    assert made == {"services": 1, "store": 1}


def test_trainer_signatures(reward):
    r, _ = reward
    rw.configure(r)
    good = lean("theorem good : 1 + 1 = 2 := by sorry")
    # verl
    assert list(inspect.signature(rw.compute_score).parameters)[:4] == [
        "data_source",
        "solution_str",
        "ground_truth",
        "extra_info",
    ]
    assert rw.compute_score("math2", good, X, {"id": 1}) == 1.0
    assert rw.compute_score_batch(["a", "b"], [good, "none"], [X, X], [None, None]) == [1.0, 0.0]
    # OpenRLHF
    assert list(inspect.signature(rw.reward_func).parameters) == ["queries", "prompts", "labels"]
    prompt = "<|user|>" + X + "<|assistant|>"
    out = rw.reward_func([prompt + good, prompt + "nothing"], [prompt, prompt], [X, X])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert [float(v) for v in out["rewards"]] == [1.0, 0.0]


def test_unregistered_judge_is_refused(tmp_path, sqlite_store):
    from math2.llm import UnregisteredModel

    st = settings_for(tmp_path, "http://127.0.0.1:9/v1")
    with pytest.raises(UnregisteredModel):
        rw.FormalizationReward(st, sqlite_store, "nobody")


def test_an_oversized_answer_scores_zero_without_reaching_lean(reward):
    r, srv = reward
    n = len(srv.requests)
    huge = lean("theorem good : 1 + 1 = 2 := by sorry") + " " * 4_000_000
    assert r.score_batch([(X, huge), ("x" * 30_000, lean("theorem good : True := sorry"))]) == [
        0.0,
        0.0,
    ]
    assert all("too long" in d["refused"] for d in r.details.values())
    assert len(srv.requests) == n


def test_what_lean_elaborated_wrongly_scores_zero_and_is_never_judged(reward):
    # issue 41: explicit instance arguments compile and print as `5 < 3`; math2's own commands
    # show the constructor in instance position, so the reward is 0 and the judge is not asked
    from tests.lean.test_elaborated_checker import SPELLINGS, statement

    r, srv = reward
    n = len(srv.requests)
    pairs = [(f"CASE-{k}", lean(statement(s))) for k, s in SPELLINGS.items()]
    pairs.append(("CASE-stop", lean(statement("∀ n : ℕ, n < (by stop exact 0)"))))
    assert r.score_batch(pairs) == [0.0] * len(pairs)
    assert len(srv.requests) == n  # nothing refused reached the judge
    statuses = {d["status"] for d in r.details.values() if str(d.get("lean", "")).find("foo") >= 0}
    assert statuses == {"sorry", "rejected"}, statuses
    assert r.score_batch([(X, lean("theorem good : @LT.lt ℕ instLTNat 5 3 := by sorry"))]) == [1.0]


def test_a_block_that_changes_meaning_through_the_library_scores_zero(reward, library_tables):
    # issue 41 §2: with the library's tables (the fixture library, tests/conftest.py) every
    # case of the class and name tables is refused before Lean and never judged
    # (and a person's context in a model's block: renaming/hiding, notation, shadowing)
    from tests.lean.test_library_tables import CHANGED, FLAGGED, LEGIT

    r, srv = reward
    n = len(srv.requests)
    refused = [code for code, _ in CHANGED.values()] + [code for code, *_ in FLAGGED.values()]
    pairs = [
        (f"CASE-{k}", lean(code.removeprefix("import Mathlib\n"))) for k, code in enumerate(refused)
    ]
    assert r.score_batch(pairs) == [0.0] * len(pairs)
    assert len(srv.requests) == n
    # the legitimate shapes score 1.0 (compiled by the double, judged consistent)
    legit = [(X, lean(code.removeprefix("import Mathlib\n"))) for code in LEGIT.values()]
    assert r.score_batch(legit) == [1.0] * len(legit)
    for code in refused:
        (d,) = [d for d in r.details.values() if d["lean"] in code]
        assert d["status"] == "rejected" and d["reason"], d


def test_an_explicit_class_variable_scores_zero_without_the_tables(reward):
    # issue 41 §2: with no tables (an empty store, no toolchain) `variable (inst : LT ℕ)`
    # reached the double and scored 1.0; now it is refused before Lean, saying why
    r, _ = reward
    code = "variable (inst : LT ℕ)\ntheorem foo : (3 : ℕ) < 2 := by sorry"
    assert r.score_batch([(X, lean(code))]) == [0.0]
    (d,) = r.details.values()
    assert d["status"] == "rejected" and "cannot tell whether `LT` is a class" in d["reason"], d
