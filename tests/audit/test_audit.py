"""The sample audit: stratified drawing, grades from a file, intervals computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.audit import bootstrap_interval, draw, import_grades, wilson_interval
from math2.audit.sample import Candidate
from math2.checks import Pair, lint_all, pair_key, record_outcomes
from math2.cli import app
from math2.errors import InputError
from math2.store.work import AuditSample


def _pairs(n: int, role: str, stratum: str, library: str = "mathlib") -> list[dict]:
    return [
        {
            "id": f"{role}-{stratum}-{i}",
            "informal": f"Statement {i} of {stratum}: for every real $x$, $x + {i} > x$.",
            "formal": f"theorem t{i} (x : ℝ) : x + {i + 1} > x := by sorry",
            "role": role,
            "library": library,
            "stratum": stratum,
        }
        for i in range(n)
    ]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_wilson_by_hand():
    # k = 4, n = 20, z = 1.96: p = 0.2, z² = 3.8416, 1 + z²/n = 1.19208,
    # centre = (0.2 + 0.09604) / 1.19208 = 0.248339,
    # half = 1.96 · √(0.008 + 0.0024010) / 1.19208 = 0.167682  →  [0.0807, 0.4160]
    lo, hi = wilson_interval(4, 20)
    assert lo == pytest.approx(0.0807, abs=1e-4) and hi == pytest.approx(0.4160, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo0, hi0 = wilson_interval(0, 10)  # no error seen: the interval still reaches 27.8%
    assert lo0 == 0.0 and hi0 == pytest.approx(0.2775, abs=1e-4)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    blo, bhi = bootstrap_interval([1] * 4 + [0] * 16, seed=1)
    assert 0.0 <= blo < 0.2 < bhi <= 0.5


def test_stratified_drawing_is_seeded_and_idempotent(sqlite_store):
    cands = [
        Candidate("formalize", "minif2f", s, f"t{s}{i}", f"f{s}{i}")
        for s, n in (("easy", 30), ("hard", 5))
        for i in range(n)
    ]
    with sqlite_store.session() as s:
        rep = draw(s, "a", cands, per_stratum=10, seed=7)
        assert rep == {
            ("formalize", "minif2f", "easy"): (30, 10),
            ("formalize", "minif2f", "hard"): (5, 5),
        }
        first = sorted(s.scalars(select(AuditSample.pair_key)))
        draw(s, "a", cands, per_stratum=10, seed=7)  # again: nothing new
        assert sorted(s.scalars(select(AuditSample.pair_key))) == first
        draw(s, "b", cands, fraction=0.1, seed=7)
        assert s.query(AuditSample).filter_by(audit="b").count() == 3 + 1
    with sqlite_store.session() as s:
        draw(s, "c", cands, per_stratum=10, seed=7)
        again = sorted(s.scalars(select(AuditSample.pair_key).where(AuditSample.audit == "c")))
    assert again == first  # the same seed draws the same pairs


def test_audit_report_through_the_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'a.db'}")
    rows = _pairs(20, "informalize", "theorem") + _pairs(10, "formalize", "competition")
    pairs = _write(tmp_path / "pairs.jsonl", rows)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0  # only init and build create a store
    res = runner.invoke(
        app, ["audit", "sample", "--name", "k97", "--per-stratum", "20", "--from", str(pairs)]
    )
    assert res.exit_code == 0, res.output
    # grades: 4 of the 20 informalize pairs are wrong (1 major, 3 minor); formalize all correct
    from math2.store import Store

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    with store.session() as s:
        ids = {x.pair_key: x.id for x in s.scalars(select(AuditSample))}
        # the lint battery judged every sampled pair; one lint is forced to disagree below
        for r in rows:
            pair = Pair(id=r["id"], informal=r["informal"], formal=r["formal"])
            record_outcomes(s, pair, lint_all(pair))
    grades = []
    for i, r in enumerate(rows):
        key = pair_key(r["informal"], r["formal"])
        g = "correct"
        if r["role"] == "informalize" and i < 4:
            g = "major" if i == 0 else "minor"
        grades.append({"sample": ids[key], "grade": g, "reason": "" if g == "correct" else "x"})
    gfile = _write(tmp_path / "grades.jsonl", grades)
    res = runner.invoke(app, ["audit", "grade", str(gfile), "--name", "k97", "--grader", "ann"])
    assert res.exit_code == 0, res.output
    assert "correct: 26" in res.output and "major: 1" in res.output and "minor: 3" in res.output
    # a second grader calls one of the minor pairs major: the most severe grade counts
    second = [{**grades[1], "grade": "major", "reason": "wrong object", "grader": "bob"}]
    res = runner.invoke(
        app, ["audit", "grade", str(_write(tmp_path / "b.jsonl", second)), "--name", "k97"]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["audit", "report", "--name", "k97", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    rates = {(r["role"], r["stratum"]): r for r in rep["rates"]}
    inf = rates[("informalize", "theorem")]
    assert (inf["graded"], inf["correct"], inf["minor"], inf["major"]) == (20, 16, 2, 2)
    assert inf["error_rate"] == pytest.approx(0.2)
    assert inf["error_low"] == pytest.approx(0.0807, abs=1e-4)  # by hand, above
    assert inf["error_high"] == pytest.approx(0.4160, abs=1e-4)
    assert rates[("informalize", "*")]["graded"] == 20
    fz = rates[("formalize", "competition")]
    assert fz["error_rate"] == 0.0 and fz["error_high"] == pytest.approx(0.2775, abs=1e-4)
    # the lints passed everything, so each lets all 4 rejected pairs through
    quality = {q["check"]: q for q in rep["checks"]}
    q = quality["lint.trivial_goal"]
    assert q["judged"] == 30 and q["rejected"] == 4 and q["lets_through"] == 4
    assert q["recall"] == 0.0 and q["precision"] is None
    text = runner.invoke(app, ["audit", "report", "--name", "k97"])
    assert text.exit_code == 0 and "20.0% [8.1%, 41.6%]" in text.output
    store.close()


def test_grade_file_errors_name_the_line(sqlite_store, tmp_path):
    with sqlite_store.session() as s:
        draw(s, "a", [Candidate("r", "l", "s", "i", "f")], per_stratum=1)
        sid = s.scalar(select(AuditSample.id))
    bad = [
        ({"sample": sid, "grade": "wrong"}, "expected correct, minor or major"),
        ({"sample": 999, "grade": "correct"}, "no such sample"),
        ({"sample": sid, "grade": "major"}, "needs a reason"),
        ({"grade": "correct"}, "no `sample` or `pair_key`"),
        ({"sample": sid, "grade": "major", "reason": "x" * 4_000_000}, "'reason' is 4,000,000"),
    ]
    for row, why in bad:
        f = _write(tmp_path / "g.jsonl", [{"sample": sid, "grade": "correct"}, row])
        with sqlite_store.session() as s, pytest.raises(InputError, match=r"g\.jsonl:2"):
            import_grades(s, "a", f, grader="ann")
        assert why in str(_err(sqlite_store, f))
    csv = tmp_path / "g.csv"
    csv.write_text(f"sample,grade,reason,grader\n{sid},minor,off by one,bob\n")
    with sqlite_store.session() as s:
        assert import_grades(s, "a", csv) == {"minor": 1}
    with sqlite_store.session() as s, pytest.raises(InputError, match="no samples"):
        import_grades(s, "none", csv)


def _err(store, f):
    with store.session() as s:
        try:
            import_grades(s, "a", f, grader="ann")
        except InputError as e:
            return e
    return None
