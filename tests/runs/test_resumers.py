"""Every job a run can be of has a resumer, and `runs resume` finishes eval and datasets runs:
the items lost at a kill are done again from the caches, nothing finished is asked twice."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import delete, func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.datasets.build import build_dataset
from math2.eval import collect_results, load_registry, shared_registry
from math2.eval.harness import EvalOptions, benchmark_sources, run_eval
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.runs import CannotResume, Resume, resumer
from math2.store import Run, RunItem
from tests.conftest import benchmark_fixtures
from tests.eval.test_harness import script as eval_script
from tests.roles.formalize.scripts import ITEMS, formalize_script, formalize_unindexed, write_items
from tests.settings import settings_for

JOBS = (
    "formalize",
    "informalize",
    "align",
    "align-eval",
    "check",
    "embed",
    "eval",
    "datasets.reconstruct",
)


@pytest.mark.parametrize("job", JOBS)
def test_every_job_has_a_resumer(job: str) -> None:
    assert callable(resumer(job))


def _lose_items(store, run_id: int, n: int) -> Run:
    """What a kill leaves: the last `n` items never finished (their calls stay cached)."""
    with store.session() as s:
        items = sorted(s.scalars(select(RunItem.item).where(RunItem.run_id == run_id)))[-n:]
        s.execute(delete(RunItem).where(RunItem.run_id == run_id, RunItem.item.in_(items)))
        run = s.get(Run, run_id)
        run.status = "running"
        s.flush()
        s.expunge(run)
    return run


def _resume_cli(store, run_id: int, base_url: str):
    """`math2 runs resume RUN` against the fake server; its result, having exited 0."""
    r = CliRunner().invoke(
        app,
        ["--db", str(store.engine.url), "runs", "resume", str(run_id)],
        env={"MATH2_LLM__BASE_URL": base_url},
    )
    assert r.exit_code == 0, r.output
    return r


def test_an_eval_run_resumes_from_its_record(tmp_path, sqlite_store) -> None:
    with sqlite_store.session() as s:
        for m in ("gen", "j1", "j2"):
            add_model(s, m, provider="fake")
    rows = [
        {
            "name": "alpha",
            "problem": "ALPHAEVAL: one and one.",
            "ground_truth": "theorem a : 1 = 1",
        },
        {"name": "beta", "problem": "BETAEVAL: truth holds.", "ground_truth": "theorem b : True"},
    ]
    toy = tmp_path / "toy.jsonl"
    toy.write_text("".join(json.dumps({**r, "benchmark_name": "Toy"}) + "\n" for r in rows))
    version = load_registry(None, [toy]).get("toy")
    opts = EvalOptions(model="gen", judges=["j1", "j2"], k=4)
    sources = benchmark_sources(None, [toy])
    with FakeServer(eval_script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        summary, samples = asyncio.run(run_eval(st, sqlite_store, [version], opts, sources=sources))
        run = _lose_items(sqlite_store, summary.run_id, 3)
        asked = len(srv.requests)
        resumed = asyncio.run(resumer("eval")(run, st, sqlite_store, Resume(run.id)))
        assert len(srv.requests) == asked  # every lost sample answered from the caches
    assert (resumed.run_id, resumed.done, resumed.skipped) == (summary.run_id, 3, 5)
    again = collect_results(sqlite_store, summary.run_id)
    assert sorted(x.model_dump_json() for x in again) == sorted(
        x.model_dump_json() for x in samples
    )
    # the benchmark changed since: refused, naming what changed
    toy.write_text(toy.read_text().replace("one and one", "two and two"))
    with pytest.raises(CannotResume, match="has changed"):
        asyncio.run(resumer("eval")(run, st, sqlite_store, Resume(run.id)))


def test_an_align_eval_run_resumes_through_runs_resume(tmp_path, sqlite_store) -> None:
    """An `align-eval` run interrupted with two pairs unjudged, and the response cache lost too:
    `runs resume` judges exactly those two from the run's record, asks no finished pair again,
    and the run's verdicts are those of an uninterrupted run."""
    from math2.roles.align import HumanPair, judge_pairs, labelled_pairs
    from math2.roles.align.evaluate import run_results
    from math2.store import LLMResponse
    from tests.roles.align.fixture import build
    from tests.roles.align.fixture import script as align_script

    build(sqlite_store, n=2)
    positives = [
        HumanPair("metamath", "same0", "Lean.SAME.t0", "lists"),
        HumanPair("metamath", "same1", "Lean.SAME.t1", "lists"),
        HumanPair("metamath", "impl0", "Lean.IMPL.t0", "lists"),
    ]
    with sqlite_store.session() as s:
        pairs = labelled_pairs(s, positives, None, seed=1)  # a positive and a random each
    with FakeServer(align_script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        whole = asyncio.run(judge_pairs(st, sqlite_store, "judge", pairs))
        assert len(whole) == len(pairs) == 6 and len(srv.requests) == 6
        with sqlite_store.session() as s:
            run_id = s.scalar(select(Run.id).where(Run.job == "align-eval"))
            s.execute(delete(LLMResponse))  # only the run's record can spare the finished pairs
        _lose_items(sqlite_store, run_id, 2)
        with sqlite_store.session() as s:
            lost = set(whole) - {i for (i,) in s.execute(select(RunItem.item))}
        asked = len(srv.requests)
        r = _resume_cli(sqlite_store, run_id, srv.base_url)
        again = srv.requests[asked:]
    assert f"run {run_id}: 2 done, 0 failed, 4 already finished" in r.output
    assert len(lost) == 2 and len(again) == 2
    # each new request judges a lost pair: its two sides' names are in the prompt
    by_id = {lp.pair.id: lp.pair for lp in pairs}
    prompts = [json.dumps(q["body"]["messages"], ensure_ascii=False) for q in again]
    for pid in lost:
        p = by_id[pid]
        assert sum(p.left.name in t and p.right.name in t for t in prompts) == 1, pid
    resumed = run_results(sqlite_store, run_id)
    assert {k: v.outcome for k, v in resumed.items()} == {k: v.outcome for k, v in whole.items()}


def test_a_dataset_run_resumes_through_the_cli(tmp_path, sqlite_store) -> None:
    pytest.importorskip("datasets")
    with sqlite_store.session() as s:
        for m in ("gen", "judge", "tracer"):
            add_model(s, m, provider="fake")
    base = formalize_script()
    script = Script(
        rules=[Rule(model="^tracer$", reply="Numbers in ℕ; an equation."), *base.rules],
        models=["gen", "judge", "tracer"],
    )
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS)
    data = benchmark_fixtures()
    with FakeServer(script) as srv:
        st = settings_for(tmp_path, srv.base_url)
        formalized = formalize_unindexed(st, sqlite_store, inp)
        first = asyncio.run(
            build_dataset(
                st,
                sqlite_store,
                formalized.run_id,
                tmp_path / "ds",
                trace_model="tracer",
                source="toy",
                licence="CC0-1.0",
                registry=shared_registry(data),
                benchmarks_dir=data,
            )
        )
        with sqlite_store.session() as s:
            run_id = s.scalar(select(Run.id).where(Run.job == "datasets.reconstruct"))
        _lose_items(sqlite_store, run_id, 1)
        (tmp_path / "ds" / "sft" / "messages.jsonl").unlink()
        asked = len(srv.requests)
        r = _resume_cli(sqlite_store, run_id, srv.base_url)
        assert len(srv.requests) == asked
    assert f"run {run_id}: 1 done, 0 failed, {first.sft - 1} already finished" in r.output
    assert len((tmp_path / "ds" / "sft" / "messages.jsonl").read_text().splitlines()) == first.sft


def test_eval_killed_with_sigkill_resumes_through_runs_resume(tmp_path) -> None:
    """`math2 eval run` killed -9 mid-run; `math2 runs resume ID` finishes it, and no model call
    whose reply was stored before the kill is asked again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from math2.store import LLMResponse, Store
    from tests.eval.test_cli import _env

    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        for m in ("gen", "j1", "j2"):
            add_model(s, m)
    script = eval_script()
    script.latency_s = 0.05
    with FakeServer(script) as srv:
        env = _env(tmp_path, srv.base_url, db)
        args = ["eval", "run", "--benchmark", "minif2f-test", "--benchmark", "fate-m"]
        args += ["--model", "gen", "--judge", "j1", "--judge", "j2", "-k", "4", "--limit", "3"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "math2", *args],
            env=env,
            cwd=tmp_path,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 120
        while len(srv.requests) < 20 and time.time() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = len(srv.requests)
        with store.session() as s:
            run = s.scalars(select(Run).where(Run.job == "eval")).one()
            stored = s.scalar(select(func.count()).select_from(LLMResponse))
            before = s.scalar(
                select(func.count()).select_from(RunItem).where(RunItem.status == "done")
            )
        assert killed_at >= 20 and before < 24, "the kill did not land mid-run"
        listed = subprocess.run(
            [sys.executable, "-m", "math2", "runs", "list"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert "killed" in listed.stdout, listed.stdout
        again = subprocess.run(
            [sys.executable, "-m", "math2", "runs", "resume", str(run.id)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert again.returncode == 0, again.stderr
        after = srv.hashes()[killed_at:]
    assert f"run {run.id}: {24 - before} done" in again.stdout
    with store.session() as s:
        # every request after the kill stored a reply of its own: none asked a stored one again
        assert len(after) == s.scalar(select(func.count()).select_from(LLMResponse)) - stored
        assert s.get(Run, run.id).status == "done"
        done = select(func.count()).select_from(RunItem).where(RunItem.status == "done")
        assert s.scalar(done) == 24
