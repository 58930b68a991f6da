"""The formalize loop end to end: fake model server over HTTP, fake Lean REPL, real store."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import select

from math2.llm import UnregisteredModel, add_model
from math2.llm.testing import FakeServer
from math2.roles.formalize import FormalizeOptions, Outcome, run_formalize
from math2.store import AgentText, Attempt, RunItem
from tests.roles.formalize.scripts import ITEMS, formalize_script, formalize_unindexed, write_items
from tests.settings import settings_for


@pytest.fixture
def registered(sqlite_store):
    with sqlite_store.session() as s:
        add_model(s, "gen", provider="fake")
        add_model(s, "judge", provider="fake")
    return sqlite_store


def results(store) -> dict:
    with store.session() as s:
        return {r.item: r for r in s.scalars(select(RunItem))}


def test_rounds_hostile_and_malformed_judge(tmp_path, registered):
    inp = tmp_path / "in.jsonl"
    write_items(inp)
    repl_log = tmp_path / "repl.jsonl"
    with FakeServer(formalize_script()) as srv:
        st = settings_for(tmp_path, srv.base_url, repl_log)
        summary = formalize_unindexed(st, registered, inp)
        requests = list(srv.requests)
    assert summary.done == 6 and summary.failed == 0
    res = {k: v.result for k, v in results(registered).items()}
    assert res["alpha"]["outcome"] == Outcome.PASSED and res["alpha"]["passed_round"] == 1
    assert res["beta"]["passed_round"] == 2
    assert res["gamma"]["passed_round"] == 3
    assert res["delta"]["outcome"] == Outcome.FAILED and len(res["delta"]["rounds"]) == 3
    # round 2 of beta saw Lean's structured diagnostic, not a truncated string
    beta_gen = [r for r in requests if "BETA" in r["body"]["messages"][-1]["content"]]
    assert any(
        "[unknown_identifier (Evn)]" in r["body"]["messages"][-1]["content"] for r in beta_gen
    )
    # gamma's refinements carried the judge's defect with its clause
    gamma_r2 = [
        r
        for r in requests
        if "GAMMA" in r["body"]["messages"][-1]["content"]
        and "round 1)" in r["body"]["messages"][-1]["content"]
    ]
    assert (
        gamma_r2
        and "missing_precondition: “every prime above two”"
        in (gamma_r2[0]["body"]["messages"][-1]["content"])
    )
    # the hostile item was refused every round and never reached Lean
    eps = res["epsilon"]
    assert eps["outcome"] == Outcome.REFUSED  # refused by hygiene, never compiled
    assert {r["compile_status"] for r in eps["rounds"]} == {"rejected"}
    sent = repl_log.read_text()
    assert "IO.Process" not in sent and "alpha" in sent
    # the judge's garbage: retried, then a clear failure, never a pass
    zeta = res["zeta"]
    assert zeta["outcome"] == Outcome.FAILED
    assert all("no valid JudgeVerdict" in (r["judge_error"] or "") for r in zeta["rounds"])
    zeta_judge = [
        r
        for r in requests
        if r["body"]["model"] == "judge" and "theorem zeta" in r["body"]["messages"][1]["content"]
    ]
    # one reply and two repairs per round; each round is its own request (keyed by round)
    assert len(zeta_judge) == 9
    with registered.session() as s:
        texts = {t.item: t for t in s.scalars(select(AgentText))}
        assert set(texts) == {"alpha", "beta", "gamma"}
        t = texts["gamma"]
        assert t.status == "pending" and t.kind == "formal_statement"
        assert "gamma3" in t.body and t.source_text.startswith("GAMMA")
        assert t.template_id == "formalize/generate@2" and len(t.template_hash) == 64
        assert t.extra["passed_round"] == 3
        att = s.get(Attempt, t.attempt_id)
        assert att.stage == "generate" and att.round == 3 and att.model == "gen"
        stages = {a.stage for a in s.scalars(select(Attempt).where(Attempt.item == "gamma"))}
        assert stages == {"plan", "search", "generate", "compile", "judge"}
        # the planner asked to search, but no index is built: the attempt says so
        search = s.scalars(
            select(Attempt).where(Attempt.item == "gamma", Attempt.stage == "search")
        ).first()
        assert search.request["queries"] == ["Nat.Prime.odd"]
        assert "no search index" in search.error


def test_ablation_switches_make_other_runs(tmp_path, registered):
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS[:3])
    opts = {"model": "gen", "judge": "judge"}
    with FakeServer(formalize_script()) as srv:
        st = settings_for(tmp_path, srv.base_url, tmp_path / "r.log")
        full = formalize_unindexed(st, registered, inp, FormalizeOptions(**opts))
        once = formalize_unindexed(st, registered, inp, FormalizeOptions(**opts, refine=False))
        before = len(srv.requests)
        plain = asyncio.run(
            run_formalize(st, registered, inp, FormalizeOptions(**opts, retrieval=False))
        )
        during_plain = srv.requests[before:]
    assert len({full.run_id, once.run_id, plain.run_id}) == 3
    by_run = by_run_results(registered)
    assert by_run[full.run_id]["beta"]["passed_round"] == 2
    assert by_run[once.run_id]["beta"]["outcome"] == Outcome.FAILED  # it needed round 2
    assert len(by_run[once.run_id]["gamma"]["rounds"]) == 1
    assert all(r["queries"] == [] for r in by_run[plain.run_id]["gamma"]["rounds"])
    assert not any("retrieval planner" in json.dumps(r["body"]) for r in during_plain)


def by_run_results(store) -> dict[int, dict[str, dict]]:
    out: dict[int, dict[str, dict]] = {}
    with store.session() as s:
        for r in s.scalars(select(RunItem)):
            out.setdefault(r.run_id, {})[r.item] = r.result
    return out


def test_best_of_n(tmp_path, registered):
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS[:2])
    with FakeServer(formalize_script()) as srv:
        st = settings_for(tmp_path, srv.base_url, tmp_path / "r.log")
        summ = formalize_unindexed(
            st, registered, inp, FormalizeOptions(model="gen", judge="judge", best_of_n=3)
        )
    res = by_run_results(registered)[summ.run_id]
    assert res["alpha"]["passed_round"] == 1
    beta = res["beta"]
    assert beta["outcome"] == Outcome.FAILED and [r["sample"] for r in beta["rounds"]] == [0, 1, 2]


def test_unregistered_model_refused(tmp_path, sqlite_store):
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS[:1])
    st = settings_for(tmp_path, "http://127.0.0.1:9/v1", tmp_path / "r.log")
    with pytest.raises(UnregisteredModel, match="math2 models add gen"):
        opts = FormalizeOptions(model="gen", judge="j")
        formalize_unindexed(st, sqlite_store, inp, opts)


def test_a_dead_model_endpoint_stops_the_items(tmp_path, registered):
    # The loop lets EndpointDown out of the item step: no item is `done` with an outcome it
    # never earned, and the run can be resumed (issue 34 §5).
    from tests.llm.dead import dead_settings, met_endpoint_down, run_until_down

    inp = tmp_path / "in.jsonl"
    write_items(inp)
    st = dead_settings(settings_for(tmp_path, "http://unused/v1"))
    opts = FormalizeOptions(model="gen", judge="judge")
    run_until_down(lambda: run_formalize(st, registered, inp, opts, require_index=False))
    met_endpoint_down(registered, done_before=0)
