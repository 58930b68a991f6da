"""`math2 check` and `math2 copy-index` through the CLI (lints and the copy check: no model)."""

from __future__ import annotations

import json

from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.store import Store
from math2.store.work import CheckResultRow

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
    assert "2 pairs checked" in res.output and "fail: 1" in res.output and "pass: 1" in res.output
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
