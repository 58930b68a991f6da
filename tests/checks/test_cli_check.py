"""`math2 check` and `math2 copy-index` through the CLI (lints and the copy check: no model)."""

from __future__ import annotations

import json

from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.store import Store
from math2.store.work import CheckResultRow
from tests.settings import cli_env

SECRET = (
    "Determine all positive integers n for which there exist real numbers x and y such that "
    "the polynomial with those coefficients has exactly n distinct real roots in the interval"
)


def test_check_and_copy_index(tmp_path, monkeypatch):
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    ref = tmp_path / "ref.jsonl"
    ref.write_text(
        json.dumps({"text": "An unrelated document about groups and rings."})
        + "\n"
        + json.dumps({"text": SECRET})
        + "\n"
    )
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0  # only init and build create a store
    res = runner.invoke(app, ["copy-index", str(ref), "--out", str(tmp_path / "idx")])
    assert res.exit_code == 0, res.output
    assert "2 documents" in res.output
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {
            "id": "copied",
            "informal": "Intro. " + SECRET + ".",
            "formal": "theorem c (n : ℕ) (h : 0 < n) : n = n := by sorry",
        },
        {
            "id": "clean",
            "informal": "For every real $x$, $x^2 \\ge 0$.",
            "formal": "theorem d (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
        },
    ]
    pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    res = runner.invoke(app, ["check", str(pairs), "--reference", str(tmp_path / "idx")])
    assert res.exit_code == 0, res.output
    assert "2 pairs checked this time (pass 1, fail 1, error 0, skip 0)" in res.output
    assert "polynomial with those" not in res.output
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    with store.session() as s:
        rows_ = list(s.scalars(select(CheckResultRow)))
    store.close()
    copy = [r for r in rows_ if r.check == "copy" and r.verdict == "fail"]
    assert len(copy) == 1
    ev = copy[0].evidence
    assert ev["spans"][0]["docs"] == ["ref.jsonl:2"] and ev["spans"][0]["start"] == len("Intro. ")
    assert "polynomial" not in json.dumps(ev)  # reference text never reaches a result
    trivial = [r for r in rows_ if r.check == "lint.trivial_goal" and r.verdict == "fail"]
    assert len(trivial) == 1 and "reflexivity" in trivial[0].evidence["findings"][0]
    # errors name the file and line
    pairs.write_text('{"id": "x", "informal": "t", "formal": "theorem x : True := trivial"}\n{')
    res = runner.invoke(app, ["check", str(pairs)])
    assert res.exit_code == 2 and "pairs.jsonl:2" in res.output
    res = runner.invoke(app, ["check", str(pairs), "--nli", "m"])
    assert res.exit_code == 2 and "--nli needs --translator" in res.output


LINT_PAIRS = [
    {  # missing_positivity flags it (a lint that only warns): the pair still passes
        "id": "w",
        "informal": "For every positive real $x$, $x + 1 > 1$.",
        "formal": "theorem w (x : ℝ) : x + 1 > 1 := by sorry",
    },
    {
        "id": "c",
        "informal": "For every real $x$, $x^2 \\ge 0$.",
        "formal": "theorem c (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
    },
]


def test_check_says_which_lints_only_warn_and_that_no_lean_ran(tmp_path, monkeypatch):
    runner = cli_env(tmp_path, monkeypatch)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in LINT_PAIRS))
    res = runner.invoke(app, ["check", str(pairs)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "2 pairs checked this time (pass 2, fail 0, error 0, skip 0)" in out, out
    # the table says a lint's fail does not fail the pair, the summary names every such lint
    assert "no: only warns" in out
    assert "only warn — their findings fail no pair" in out
    assert "lint.missing_positivity: 1 flagged" in out and "lint.unmatched_variable: 0" in out
    assert "1 of the pairs that passed would fail" in out
    assert "no Lean ran: the battery has no compile check" in out


def test_check_compile_names_the_lean_and_a_double_says_so(tmp_path, monkeypatch):
    runner = cli_env(tmp_path, monkeypatch)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in LINT_PAIRS))
    res = runner.invoke(app, ["check", str(pairs), "--compile"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "compiled by: fake-repl · Lean" in out and "a test double, not Lean" in out, out


def test_check_progress_and_summary_count_undecided_pairs_as_errors(tmp_path, monkeypatch):
    # A judge whose every answer is unreadable: every pair is `error`, and the progress line
    # and the summary say so (they said "errors 0" and "pass" counts before).
    from math2.llm.testing import FakeServer, Rule, Script

    with FakeServer(Script(rules=[Rule(reply="I will not answer in JSON.")])) as srv:
        runner = cli_env(tmp_path, monkeypatch, srv.base_url, models=("judge",))
        pairs = tmp_path / "pairs.jsonl"
        pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in LINT_PAIRS))
        res = runner.invoke(app, ["check", str(pairs), "--judge", "judge"])
    out = " ".join(res.output.split())
    assert "done 2/2 (error 2) · errors 2" in out, out
    assert "2 pairs checked this time (pass 0, fail 0, error 2, skip 0)" in out
    assert "2 pairs are `error`: a check could not decide" in out
