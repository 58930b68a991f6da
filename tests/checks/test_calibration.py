"""Calibration against people: exact figures on a fixture, Fleiss' κ, the battery, the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from math2.audit.stats import wilson_interval
from math2.checks.calibration import BATTERY, LabelledVerdict, calibrate, fleiss_kappa
from math2.checks.lints import common
from math2.cli import app
from math2.store import Store
from math2.store.work import Run

BAD = {"p1": ["x"], "p2": ["x"], "p3": ["y"]}
GOOD = ["p4", "p5", "p6"]


def _rows(check: str, verdicts: dict[str, str], checker: str = "", warn=()) -> list:
    return [
        LabelledVerdict(
            pair=p,
            check=check,
            checker=checker,
            verdict=v,
            faithful=p in GOOD,
            error_types=BAD.get(p, []),
            warn_only=p in warn,
        )
        for p, v in verdicts.items()
    ]


A = {"p1": "fail", "p2": "error", "p3": "pass", "p4": "fail", "p5": "pass", "p6": "skip"}
B = {"p1": "pass", "p2": "pass", "p3": "fail", "p4": "pass", "p5": "fail", "p6": "pass"}


def test_figures_are_exact_on_a_fixture():
    cal = calibrate(_rows("a", A) + _rows("b", B, warn={"p3"}))
    by = {f.check: f for f in cal.checks}
    a = by["a"]
    assert (a.judged, a.skipped, a.errors, a.lets_through) == (5, 1, 1, 1)
    assert (a.recall.k, a.recall.n) == (2, 3)  # error counts as flagged: never a pass
    assert (a.false_flag.k, a.false_flag.n) == (1, 2)  # p6 skipped: not judged
    assert (a.precision.k, a.precision.n) == (2, 3)
    assert a.recall.value == pytest.approx(2 / 3)
    assert (a.recall.low, a.recall.high) == pytest.approx(wilson_interval(2, 3))
    assert (a.false_flag.low, a.false_flag.high) == pytest.approx(wilson_interval(1, 2))
    assert {t: (r.k, r.n) for t, r in a.per_error_type.items()} == {"x": (2, 2), "y": (0, 1)}
    # the battery: p3's warn-only finding does not fail it; p5's finding by b does
    bat = by[BATTERY]
    assert (bat.recall.k, bat.recall.n) == (2, 3)
    assert (bat.false_flag.k, bat.false_flag.n) == (2, 3)
    assert (bat.precision.k, bat.precision.n) == (2, 4)
    assert cal.pairs == 6 and cal.unfaithful == 3
    # b only warns: named, and the battery as if its findings failed a pair (p3 now caught)
    assert cal.warn_only == ["b"]
    worst = cal.battery_if_failing
    assert worst is not None and worst.check == BATTERY
    assert (worst.recall.k, worst.recall.n) == (3, 3)
    assert (worst.false_flag.k, worst.false_flag.n) == (2, 3)
    assert (worst.precision.k, worst.precision.n) == (3, 5)
    # nothing warns: nothing named, no second battery
    plain = calibrate(_rows("a", A) + _rows("b", B))
    assert plain.warn_only == [] and plain.battery_if_failing is None


def test_fleiss_kappa_by_hand_and_judges_agreement():
    # 4 pairs × 3 raters; P̄ = 2/3, P_e = 1/2, κ = 1/3 (worked by hand)
    ratings = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]
    assert fleiss_kappa(ratings) == pytest.approx(1 / 3)
    assert fleiss_kappa([[True, True], [False, False]]) == pytest.approx(1.0)
    rows = []
    for j, col in enumerate(zip(*ratings, strict=True)):
        verdicts = {f"p{i + 1}": ("fail" if flag else "pass") for i, flag in enumerate(col)}
        rows += _rows("consistency", verdicts, checker=f"judge{j}")
    cal = calibrate(rows)
    agree = cal.agreement["consistency"]
    assert agree["judges"] == ["judge0", "judge1", "judge2"] and agree["pairs"] == 4
    assert agree["fleiss_kappa"] == pytest.approx(1 / 3)
    assert {f.checker for f in cal.checks if f.check == "consistency"} == {
        "judge0",
        "judge1",
        "judge2",
    }


def test_check_labels_prints_and_stores_the_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    # as if unused_hypothesis had measured 95 % precision: it fails pairs
    monkeypatch.setattr(
        common,
        "measured_precision",
        lambda: {"lint.unused_hypothesis": {"flagged": 20, "precision": 0.95}},
    )
    rows = [
        {  # unfaithful, and the lints see it: a hypothesis with no variable
            "id": "u1",
            "informal": "For every real $x$, $x^2 \\ge 0$.",
            "formal": "theorem u1 (x : ℝ) (h : 2 < 3) : x ^ 2 ≥ 0 := by sorry",
            "faithful": False,
            "error_types": ["redundant_constraint"],
        },
        {  # unfaithful, and nothing sees it
            "id": "u2",
            "informal": "For every real $x$, $x^2 > 0$.",
            "formal": "theorem u2 (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
            "faithful": False,
            "error_types": ["changed_condition"],
        },
        {
            "id": "f1",
            "informal": "For every real $x$, $x^2 \\ge 0$.",
            "formal": "theorem f1 (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
            "faithful": True,
        },
    ]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = tmp_path / "cal.json"
    assert CliRunner().invoke(app, ["init"]).exit_code == 0  # only init and build make a store
    res = CliRunner().invoke(app, ["check", str(pairs), "--labels", "--calibration-out", str(out)])
    assert res.exit_code == 0, res.output
    assert "3 labelled pairs, 2 unfaithful" in res.output
    cal = json.loads(out.read_text())
    by = {f["check"]: f for f in cal["checks"]}
    uh = by["lint.unused_hypothesis"]
    assert (uh["recall"]["k"], uh["recall"]["n"]) == (1, 2)
    assert (uh["false_flag"]["k"], uh["false_flag"]["n"]) == (0, 1)
    assert uh["per_error_type"]["redundant_constraint"]["k"] == 1
    assert (by["battery"]["recall"]["k"], by["battery"]["recall"]["n"]) == (1, 2)
    # every other lint only warns: the table and the text say so, and what the battery would
    # catch if they failed pairs
    text = " ".join(res.output.split())
    from math2.checks import make_check
    from math2.checks.lints import LINTS

    warning = sorted(n for n in LINTS if common.warns(n, make_check(n).declared_status))
    assert cal["warn_only"] == warning and "lint.missing_positivity" in warning
    assert "lint.unused_hypothesis" not in warning  # measured at 95 %: it fails pairs
    assert "| lint.missing_positivity (only warns) |" in text
    assert "| lint.unused_hypothesis |" in text
    assert f"Only warn ({len(warning)}): {', '.join(warning)}." in text
    worst = cal["battery_if_failing"]
    assert worst["recall"]["n"] == 2 and worst["recall"]["k"] >= 1
    assert "If they failed a pair, the battery would flag" in text
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    with store.session() as s:
        (run,) = s.query(Run).filter(Run.job == "check").all()
        assert run.params["calibration"] == cal
    store.close()
    # a pair without a label is refused, by name
    pairs.write_text(json.dumps({k: v for k, v in rows[0].items() if k != "faithful"}) + "\n")
    res = CliRunner().invoke(app, ["check", str(pairs), "--labels"])
    assert res.exit_code != 0 and "no 'faithful' label" in res.output


def test_a_lint_under_the_precision_bar_warns_and_fails_no_pair(monkeypatch):
    from math2.checks import Pair, overall
    from math2.checks.lints import lint_all
    from math2.store.work import Verdict

    pair = Pair(id="p", informal="For real $x$.", formal="theorem t (x : ℝ) (h : 2 < 3) : x = x")
    for precision, warned in ((0.95, False), (0.6, True)):
        monkeypatch.setattr(
            common,
            "measured_precision",
            lambda p=precision: {"lint.unused_hypothesis": {"flagged": 20, "precision": p}},
        )
        outs = [o for o in lint_all(pair) if o.check == "lint.unused_hypothesis"]
        assert outs[0].verdict is Verdict.FAIL and bool(outs[0].evidence.get("warn")) is warned
        assert overall(outs) is (Verdict.PASS if warned else Verdict.FAIL)
    # never measured (flagged nothing on the dev set): the lint's declared status decides
    monkeypatch.setattr(common, "measured_precision", lambda: {})
    assert common.warns("lint.missing_positivity", "warn") is True
    assert common.warns("lint.trivial_goal", "fail") is False
