"""A run in which every item failed exits 1 and prints the most common reasons, counted with an
example item each — formalize, informalize, check, eval run and align, through one helper."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.llm.testing import FakeServer
from math2.store import Store
from tests.conftest import FIXTURES, benchmark_fixtures
from tests.roles.align.fixture import build, script

LEAN = str(FIXTURES / "leanproj")
UNREACHABLE = "http://127.0.0.1:9/v1"  # nothing listens on port 9: every call fails to connect


@pytest.fixture
def env(tmp_path: Path, monkeypatch) -> Path:
    db = tmp_path / "o.db"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{db}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MATH2_LLM__BASE_URL", UNREACHABLE)
    monkeypatch.setenv("MATH2_LLM__MAX_RETRIES", "0")
    # every item meets the dead endpoint itself (no early stop: that is tests/llm/dead.py's)
    monkeypatch.setenv("MATH2_LLM__DOWN_AFTER", "0")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    fake = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(fake))
    monkeypatch.setenv("MATH2_BENCHMARKS", str(benchmark_fixtures()))
    run = CliRunner().invoke
    assert run(app, ["init"]).exit_code == 0
    for m in ("gen", "judge", "tr"):
        assert run(app, ["models", "add", m, "--provider", "p", "--terms", "MIT"]).exit_code == 0
    return tmp_path


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return str(path)


def _all_failed(res, n: int, noun: str) -> None:
    out = res.output.replace("\n", " ")
    assert res.exit_code == 1, res.output
    assert f"{n} of {n} {noun} failed" in out, res.output
    assert f"every {noun.rstrip('s')} failed" in out
    # the reason names the connection failure, counted, with an example item
    assert f"{n} × " in out and "ConnectError" in out and "(e.g. " in out, res.output
    assert "Traceback" not in res.output


def test_formalize_against_an_endpoint_that_does_not_answer(env) -> None:
    stmts = _jsonl(env / "s.jsonl", [{"id": i, "informal": f"{i} equals {i}."} for i in (1, 2)])
    res = CliRunner().invoke(
        app, ["formalize", stmts, "--model", "gen", "--judge", "judge", "--no-retrieval"]
    )
    _all_failed(res, 2, "items")
    assert "127.0.0.1:9" in res.output
    # resumed, with the endpoint still down, it says the same
    _all_failed(CliRunner().invoke(app, ["runs", "resume", "1"]), 2, "items")


def test_informalize_with_every_declaration_failed(env) -> None:
    res = CliRunner().invoke(
        app,
        ["informalize", "--model", "gen", "--translator", "tr", "--limit", "2", "--lean-dir", LEAN],
    )
    _all_failed(res, 2, "declarations")


def test_check_with_every_pair_errored(env) -> None:
    pairs = _jsonl(
        env / "p.jsonl",
        [{"id": i, "informal": "One is one.", "formal": f"theorem t{i} : 1 = 1"} for i in (1, 2)],
    )
    res = CliRunner().invoke(app, ["check", pairs, "--judge", "judge"])
    _all_failed(res, 2, "pairs")


def test_check_where_pairs_have_answers_exits_zero(env) -> None:
    pair = {"id": 1, "informal": "One is one.", "formal": "theorem t : 1 = 1"}
    pairs = _jsonl(env / "p.jsonl", [pair])
    res = CliRunner().invoke(app, ["check", pairs])
    assert res.exit_code == 0, res.output
    assert "failed;" not in res.output


def test_eval_run_with_every_sample_failed(env) -> None:
    args = ["eval", "run", "--benchmark", "fate-m", "--model", "gen", "--judge", "judge"]
    res = CliRunner().invoke(app, [*args, "-k", "2", "--limit", "1"])
    _all_failed(res, 2, "samples")


def test_align_all_failed_and_partly_failed(env, monkeypatch) -> None:
    db = f"sqlite:///{env / 'align.db'}"  # the align fixture's own sources, no manifest
    monkeypatch.setenv("MATH2_DB_URL", db)
    store = Store(db)
    store.upgrade()
    build(store)
    store.close()
    args = ["align", "--model", "judge", "--dataset", "theoremgraph"]
    _all_failed(CliRunner().invoke(app, args), 8, "pairs")
    # with an endpoint that answers, only the two pairs without a readable verdict fail:
    # the run exits 0 and still says why they failed
    with FakeServer(script()) as srv:
        monkeypatch.setenv("MATH2_LLM__BASE_URL", srv.base_url)
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "2 of 8 pairs failed" in res.output and "unjudged" in res.output, res.output


@pytest.mark.parametrize(
    ("module", "function", "args"),
    [
        ("math2.checks", "run_checks", ["check", "{pairs}", "--judge", "judge"]),
        ("math2.roles.formalize", "run_formalize", ["formalize", "{stmts}", "--model", "gen",
                                                    "--judge", "judge", "--no-retrieval"]),
        ("math2.roles.informalize", "run_informalize", ["informalize", "--model", "gen",
                                                        "--translator", "tr", "--lean-dir", LEAN]),
        ("math2.eval", "run_eval", ["eval", "run", "--benchmark", "fate-m", "--model", "gen",
                                    "--judge", "judge", "-k", "1", "--limit", "1"]),
    ],
)  # fmt: skip
def test_a_run_stopped_by_a_dead_endpoint_exits_1_with_one_line(
    env, monkeypatch, module, function, args
) -> None:
    # Where the run engine stops a run on EndpointDown and raises it, each command ends with one
    # line naming the endpoint and exit code 1 (issue 34 §5; stopping is the engine's part).
    import importlib

    from math2.llm import EndpointDown

    message = f"the endpoint {UNREACHABLE} (model judge) is down: 3 calls in a row"

    async def stopped(*_a, **_k):
        raise EndpointDown(message, base_url=UNREACHABLE, consecutive=3)

    monkeypatch.setattr(importlib.import_module(module), function, stopped)
    pair = {"id": 1, "informal": "One.", "formal": "theorem t : 1 = 1"}
    files = {
        "pairs": _jsonl(env / "p.jsonl", [pair]),
        "stmts": _jsonl(env / "s.jsonl", [{"id": 1, "informal": "One is one."}]),
    }
    res = CliRunner().invoke(app, [a.format(**files) for a in args])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and "no --benchmark" not in ln]
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert "Traceback" not in res.output
