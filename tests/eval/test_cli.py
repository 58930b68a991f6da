"""`math2 eval run` and `math2 eval report` as a user runs them, with the fakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from math2.eval import read_html_scores, read_png_scores
from math2.llm import add_model
from math2.llm.testing import FakeServer
from math2.store import Store
from tests.conftest import benchmark_fixtures
from tests.eval.test_harness import REPL_RULES, script


def _env(tmp, base_url, db, benchmarks=None):
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    for r in REPL_RULES:
        repl += ["--rule", r]
    env = dict(os.environ)
    env.update(
        {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_LLM__BASE_URL": base_url,
            "MATH2_LLM__CONCURRENCY": "4",
            "MATH2_LEAN__PROJECT_DIR": str(tmp),
            "MATH2_LEAN__REPL_COMMAND": json.dumps(repl),
            "MATH2_LEAN__WORKERS": "2",
            "MATH2_CONFIG": str(tmp / "none.toml"),
            "MATH2_BENCHMARKS": str(benchmarks or benchmark_fixtures()),
        }
    )
    return env


def _math2(*args, env, cwd):
    return subprocess.run(
        [sys.executable, "-m", "math2", *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_eval_run_and_report_end_to_end(tmp_path):
    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        for m in ("gen", "j1", "j2"):
            add_model(s, m)
    store.close()
    with FakeServer(script()) as srv:
        env = _env(tmp_path, srv.base_url, db)
        args = ["eval", "run", "--benchmark", "minif2f-test", "--benchmark", "fate-m"]
        args += ["--model", "gen", "--judge", "j1", "--judge", "j2", "-k", "8", "--limit", "2"]
        done = _math2(*args, "--report", str(tmp_path / "r1"), env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "fate-m" in done.stdout and "macro" in done.stdout
        assert "MathForm-8B 97.33" in done.stdout  # the seed's figure next to ours
        # the last line counts the failed samples and names the Lean (a double says so)
        last = " ".join(done.stdout.split("samples this time")[-1].split())
        assert "0 of the run's 32 samples failed (each scored 0)" in last, done.stdout
        assert "compiled by: fake-repl" in last and "a test double, not Lean" in last
        run_id = int(done.stdout.split("run ")[-1].split(":")[0])
        rep = _math2(
            "eval", "report", "--run", str(run_id), str(tmp_path / "r2"), env=env, cwd=tmp_path
        )
        assert rep.returncode == 0, rep.stderr
        assert "compiled by: fake-repl" in rep.stdout.splitlines()[-2], rep.stdout
        bad = _math2(
            "eval",
            "run",
            "--benchmark",
            "nope",
            "--model",
            "gen",
            "--judge",
            "j1",
            env=env,
            cwd=tmp_path,
        )
    assert bad.returncode == 2 and "no benchmark 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr
    html = read_html_scores(tmp_path / "r2" / "report.html")
    png = read_png_scores(tmp_path / "r1" / "passk.png")
    assert html.ks == [1, 2, 4, 8] and png.ks == [1, 2, 4, 8]
    assert {b.benchmark for b in html.benchmarks} == {"minif2f-test", "fate-m"}
    for b in html.benchmarks:
        assert b.items == 2 and b.samples_per_item == 8
        assert b.sc[8].value == 1.0 and b.cc["j1"][8].value == 1.0
    assert html.macro_sc[1].value == png.macro_sc[1].value


def test_eval_decontam_command_and_bad_input(tmp_path):
    bench = benchmark_fixtures()
    env = dict(os.environ, MATH2_CONFIG=str(tmp_path / "none.toml"), MATH2_BENCHMARKS=str(bench))
    from math2.eval import shared_registry

    it = shared_registry(bench).get("proofnet-test").items[5]
    inp = tmp_path / "d.jsonl"
    inp.write_text(
        json.dumps({"id": 1, "text": "A fresh statement about modules over rings here."})
        + "\n"
        + json.dumps({"id": 2, "text": "Copied: " + it.informal})
        + "\n",
        "utf-8",
    )
    ok = _math2(
        "eval",
        "decontam",
        str(inp),
        str(tmp_path / "o.jsonl"),
        "--field",
        "text",
        env=env,
        cwd=tmp_path,
    )
    assert ok.returncode == 0, ok.stderr
    kept = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["id"] for r in kept] == [1] and '"contaminated": 1' in ok.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "fine"}\n{"id": 2, "text": \n', "utf-8")
    res = _math2(
        "eval",
        "decontam",
        str(bad),
        str(tmp_path / "o2.jsonl"),
        "--field",
        "text",
        env=env,
        cwd=tmp_path,
    )
    assert res.returncode == 2 and "bad.jsonl:2" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "o2.jsonl").exists()


def test_eval_run_with_only_a_harness_file(tmp_path):
    """MathForm's harness fields (problem, ground_truth, name), no --benchmark: the benchmark
    is named from the file and the command says so; the report names the Lean."""
    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        for m in ("gen", "j1"):
            add_model(s, m)
    store.close()
    harness = tmp_path / "tiny_bench.jsonl"
    rows = [
        {"name": f"t{i}", "problem": f"Statement {i}.", "ground_truth": "theorem t : True := sorry"}
        for i in range(2)
    ]
    harness.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeServer(script()) as srv:
        env = _env(tmp_path, srv.base_url, db)
        # no benchmark sets folder at all: no MATH2_BENCHMARKS, FATE-M not fetched
        del env["MATH2_BENCHMARKS"]
        env["MATH2_DATA__DIR"] = str(tmp_path / "no-shared-data")
        env["MATH2_DATA__CACHE_DIR"] = str(tmp_path / "cache")
        args = ["eval", "run", "--harness", str(harness), "--model", "gen", "--judge", "j1"]
        done = _math2(*args, "-k", "1", "--report", str(tmp_path / "r"), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tiny-bench@harness:tiny_bench.jsonl" in done.stderr
    assert "no --benchmark" in done.stderr
    table = (tmp_path / "r" / "table.md").read_text()
    assert "compiled by:" in table and "tiny-bench" in table
