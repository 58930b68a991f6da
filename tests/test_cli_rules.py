"""The command line's rules: only init and build create a store; options checked with their
ranges; a model registered with provider and terms, re-registered only with --replace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from tests.conftest import benchmark_fixtures


@pytest.fixture
def missing_db(tmp_path: Path, monkeypatch) -> Path:
    db = tmp_path / "none.db"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{db}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    # eval and datasets read benchmarks (FATE-M is an external data set): the fixtures'
    monkeypatch.setenv("MATH2_BENCHMARKS", str(benchmark_fixtures()))
    return db


def _files(tmp_path: Path) -> dict[str, str]:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": 1, "informal": "One is one.", "formal": "1 = 1"}) + "\n")
    stmts = tmp_path / "s.jsonl"
    stmts.write_text(json.dumps({"id": 1, "informal": "One equals one."}) + "\n")
    grades = tmp_path / "g.jsonl"
    grades.write_text(json.dumps({"sample": 1, "grade": "correct", "reason": "ok"}) + "\n")
    return {"pairs": str(pairs), "stmts": str(stmts), "grades": str(grades)}


COMMANDS = {
    "check": ["check", "{pairs}"],
    "audit sample": ["audit", "sample", "--name", "a", "--per-stratum", "1"],
    "audit grade": ["audit", "grade", "{grades}", "--name", "a"],
    "audit report": ["audit", "report", "--name", "a"],
    "models add": ["models", "add", "m", "--provider", "someone", "--terms", "MIT"],
    "models list": ["models", "list"],
    "formalize": ["formalize", "{stmts}", "--model", "m", "--judge", "j"],
    "eval run": ["eval", "run", "--benchmark", "fate-m", "--model", "m", "--judge", "j", "-k", "1"],
    "datasets build": [
        "datasets",
        "build",
        "--run",
        "1",
        "{out}",
        "--trace-model",
        "t",
        "--source",
        "s",
        "--licence",
        "MIT",
    ],
    "informalize": [
        "informalize",
        "--library",
        "mathlib",
        "--limit",
        "1",
        "--model",
        "m",
        "--translator",
        "t",
    ],
    "runs list": ["runs", "list"],
    "report": ["report"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_but_init_and_build_creates_a_store(tmp_path, missing_db, name) -> None:
    files = {**_files(tmp_path), "out": str(tmp_path / "ds")}
    argv = [a.format(**files) for a in COMMANDS[name]]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2, (name, res.output, res.exception)
    assert "math2 init" in res.output, (name, res.output)
    assert not missing_db.exists(), name
    assert not (tmp_path / "ds").exists()


def test_reviewers_add_on_a_missing_store(tmp_path, missing_db) -> None:
    res = CliRunner().invoke(app, ["reviewers", "add", "bob", "--password-stdin"], input="pw1\n")
    assert res.exit_code == 2 and not missing_db.exists(), res.output


def test_init_creates_the_store(missing_db) -> None:
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    assert missing_db.exists()


RANGES = {
    "--max-rounds 0": ["formalize", "{stmts}", "--model", "m", "--judge", "j", "--max-rounds", "0"],
    "--best-of-n 0": ["formalize", "{stmts}", "--model", "m", "--judge", "j", "--best-of-n", "0"],
    "--top-k -1": ["formalize", "{stmts}", "--model", "m", "--judge", "j", "--top-k", "-1"],
    "eval -k 0": [
        "eval",
        "run",
        "--benchmark",
        "fate-m",
        "--model",
        "m",
        "--judge",
        "j",
        "-k",
        "0",
    ],
    "--lean bogus": ["formalize", "{stmts}", "--model", "m", "--judge", "j", "--lean", "bogus"],
    "check --lean bogus": ["check", "{pairs}", "--lean", "bogus"],
}


@pytest.mark.parametrize("name", sorted(RANGES))
def test_options_are_checked_before_anything_runs(tmp_path, missing_db, name) -> None:
    files = _files(tmp_path)
    res = CliRunner().invoke(app, [a.format(**files) for a in RANGES[name]])
    assert res.exit_code == 2, res.output
    flag = name.split()[-2] if name.startswith(("eval", "check")) else name.split()[0]
    assert flag in res.output, res.output
    if "bogus" in name:
        assert "repl, kimina, lake" in res.output
    assert not missing_db.exists()


def test_models_add_needs_provider_terms_and_replace(tmp_path, missing_db) -> None:
    run = CliRunner().invoke
    assert run(app, ["init"]).exit_code == 0
    res = run(app, ["models", "add", "m"])
    assert res.exit_code == 2 and "--provider" in res.output
    res = run(app, ["models", "add", "m", "--provider", "p", "--terms", "MIT"])
    assert res.exit_code == 0, res.output
    res = run(app, ["models", "add", "m", "--provider", "q", "--terms", "Apache-2.0"])
    assert res.exit_code == 2 and "--replace" in res.output
    listed = run(app, ["models", "list"]).output
    assert "Apache-2.0" not in listed  # the refused update left the entry as it was
    res = run(app, ["models", "add", "m", "--provider", "q", "--terms", "Apache-2.0", "--replace"])
    assert res.exit_code == 0, res.output
    assert "Apache-2.0" in run(app, ["models", "list"]).output


def test_a_json_error_names_the_real_column(tmp_path, missing_db) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "fine"}\n{"id": 2, "text": }\n', "utf-8")
    res = CliRunner().invoke(
        app, ["eval", "decontam", str(bad), str(tmp_path / "o.jsonl"), "--field", "text"]
    )
    assert res.exit_code == 2
    assert "bad.jsonl:2:19" in res.output.replace("\n", ""), res.output
