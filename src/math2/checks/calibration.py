"""How often each check misses, measured against people: one computation for `math2 check
--labels` and for the sample audit.

Input: labelled verdicts — for each (pair, check, checker) the check's verdict and the person's
label (`faithful` true or false, and the error types they named). A check *flags* a pair when it
says fail or error (an undecided check never accepts); a `skip` is counted apart (the check did
not apply). For each check and checker, and for the battery (a pair is flagged when any check
that can fail a pair flagged it; a lint that only warns does not count):

- recall on unfaithful pairs: flagged / unfaithful, with a 95 % Wilson interval,
- false-flag rate on faithful pairs: flagged / faithful, with its Wilson interval,
- precision: unfaithful / flagged (with its interval), and recall per error type.

Several judges (`checker`s of one check) also get their agreement: Fleiss' κ (statsmodels) over
the pairs every one of them judged, on the binary flagged / not flagged.

The checks that only warn are named (`warn_only`), and when there are any, the battery is also
scored as if their findings failed a pair (`battery_if_failing`): what the battery would catch
if they did — so a battery row of 0 % next to lints that flagged pairs is never read as "the
lints found nothing".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from math2.store.work import Verdict

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = [
    "BATTERY",
    "Calibration",
    "CheckFigures",
    "LabelledVerdict",
    "Rate",
    "calibrate",
    "fleiss_kappa",
    "render_calibration",
]

BATTERY = "battery"
_FLAGS = (Verdict.FAIL.value, Verdict.ERROR.value)


class LabelledVerdict(BaseModel):
    """One check's verdict on one pair, with the person's label for the pair."""

    pair: str  # the pair key (or id)
    check: str
    checker: str = ""
    verdict: str  # a Verdict value
    faithful: bool
    error_types: list[str] = []
    warn_only: bool = False  # a lint under the precision bar: it warns, it does not fail a pair


def labelled_verdicts(
    s: Session, labels: dict[str, tuple[bool, list[str]]]
) -> list[LabelledVerdict]:
    """Every stored check verdict on the pairs `labels` names (pair key -> (faithful, the
    person's error types)), each with its label: what `calibrate` reads."""
    from sqlalchemy import select

    from math2.store.work import CheckResultRow

    rows: list[LabelledVerdict] = []
    keys = list(labels)
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        for r in s.scalars(select(CheckResultRow).where(CheckResultRow.pair_key.in_(chunk))):
            faithful, types = labels[r.pair_key]
            rows.append(
                LabelledVerdict(
                    pair=r.pair_key,
                    check=r.check,
                    checker=r.checker,
                    verdict=r.verdict,
                    faithful=faithful,
                    error_types=types,
                    warn_only=bool((r.evidence or {}).get("warn")),
                )
            )
    return rows


class Rate(BaseModel):
    """k of n, as a fraction with a 95 % Wilson interval (value None when n is 0)."""

    k: int
    n: int
    value: float | None
    low: float
    high: float

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        lo, hi = wilson_interval(k, n)
        return cls(k=k, n=n, value=k / n if n else None, low=lo, high=hi)


def wilson_interval(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of k in n (statsmodels); (0, 1) when n is 0."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return 0.0, 1.0
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return max(0.0, float(lo)), min(1.0, float(hi))


class CheckFigures(BaseModel):
    """One check (and checker) against the labels."""

    check: str
    checker: str = ""
    judged: int  # labelled pairs it gave pass, fail or error on
    skipped: int
    errors: int  # of the flagged, how many were `error` (undecided)
    recall: Rate  # flagged among the unfaithful
    false_flag: Rate  # flagged among the faithful
    precision: Rate  # unfaithful among the flagged
    per_error_type: dict[str, Rate] = {}  # recall among unfaithful pairs of each type
    lets_through: int = 0  # unfaithful pairs it passed


class Calibration(BaseModel):
    pairs: int
    unfaithful: int
    checks: list[CheckFigures]
    agreement: dict[str, dict[str, Any]] = {}  # check -> {"judges", "pairs", "fleiss_kappa"}
    # checks whose findings only warn (a lint under the precision bar): the battery ignores them
    warn_only: list[str] = []
    # the battery as if every warning failed its pair (None when no check only warns)
    battery_if_failing: CheckFigures | None = None


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float:
    """Fleiss' κ of binary ratings: one row per subject, one column per rater."""
    from statsmodels.stats.inter_rater import fleiss_kappa as _fk

    if not ratings:
        return float("nan")
    arr = np.asarray(ratings, dtype=bool)
    table = np.stack([arr.sum(axis=1), (~arr).sum(axis=1)], axis=1)
    if (table.sum(axis=0) == 0).any():  # every rating the same: perfect, chance-corrected
        return 1.0
    return float(_fk(table, method="fleiss"))


def _figures(check: str, checker: str, rows: list[LabelledVerdict]) -> CheckFigures:
    applied = [r for r in rows if r.verdict != Verdict.SKIP.value]
    bad = [r for r in applied if not r.faithful]
    good = [r for r in applied if r.faithful]
    flagged = [r for r in applied if r.verdict in _FLAGS]
    types: dict[str, list[LabelledVerdict]] = defaultdict(list)
    for r in bad:
        for t in r.error_types or ["(none named)"]:
            types[t].append(r)
    return CheckFigures(
        check=check,
        checker=checker,
        judged=len(applied),
        skipped=len(rows) - len(applied),
        errors=sum(1 for r in flagged if r.verdict == Verdict.ERROR.value),
        recall=Rate.of(sum(r.verdict in _FLAGS for r in bad), len(bad)),
        false_flag=Rate.of(sum(r.verdict in _FLAGS for r in good), len(good)),
        precision=Rate.of(sum(not r.faithful for r in flagged), len(flagged)),
        per_error_type={
            t: Rate.of(sum(r.verdict in _FLAGS for r in rs), len(rs))
            for t, rs in sorted(types.items())
        },
        lets_through=sum(1 for r in bad if r.verdict == Verdict.PASS.value),
    )


def _battery_rows(
    rows: list[LabelledVerdict], *, warnings_fail: bool = False
) -> list[LabelledVerdict]:
    """One row per pair: the battery's overall verdict (error > fail > pass; skip when no
    check applied); a warn-only lint's finding does not fail the pair (unless `warnings_fail`)."""
    by_pair: dict[str, list[LabelledVerdict]] = defaultdict(list)
    for r in rows:
        by_pair[r.pair].append(r)
    out = []
    for pair, rs in by_pair.items():
        verdicts = {
            Verdict.PASS.value
            if r.warn_only and r.verdict == Verdict.FAIL.value and not warnings_fail
            else r.verdict
            for r in rs
        }
        applied = verdicts - {Verdict.SKIP.value}
        if not applied:
            v = Verdict.SKIP.value
        elif Verdict.ERROR.value in applied:
            v = Verdict.ERROR.value
        elif Verdict.FAIL.value in applied:
            v = Verdict.FAIL.value
        else:
            v = Verdict.PASS.value
        out.append(
            LabelledVerdict(
                pair=pair,
                check=BATTERY,
                verdict=v,
                faithful=rs[0].faithful,
                error_types=rs[0].error_types,
            )
        )
    return out


def calibrate(rows: Iterable[LabelledVerdict], *, battery: bool = True) -> Calibration:
    """Figures per (check, checker), for the battery, and judges' agreement per check."""
    rows = list(rows)
    groups: dict[tuple[str, str], list[LabelledVerdict]] = defaultdict(list)
    for r in rows:
        groups[(r.check, r.checker)].append(r)
    figures = [_figures(c, k, rs) for (c, k), rs in sorted(groups.items())]
    warn_only = sorted(
        {_label(c, k) for (c, k), rs in groups.items() if any(r.warn_only for r in rs)}
    )
    if_failing = None
    if battery and rows:
        figures.append(_figures(BATTERY, "", _battery_rows(rows)))
        if warn_only:
            if_failing = _figures(BATTERY, "", _battery_rows(rows, warnings_fail=True))
    agreement: dict[str, dict[str, Any]] = {}
    for check in sorted({c for c, _ in groups}):
        judges = sorted(k for c, k in groups if c == check)
        if len(judges) < 2:
            continue
        flags: dict[str, dict[str, bool]] = {
            j: {
                r.pair: r.verdict in _FLAGS
                for r in groups[(check, j)]
                if r.verdict != Verdict.SKIP.value
            }
            for j in judges
        }
        common = sorted(set.intersection(*(set(f) for f in flags.values())))
        agreement[check] = {
            "judges": judges,
            "pairs": len(common),
            "fleiss_kappa": fleiss_kappa([[flags[j][p] for j in judges] for p in common]),
        }
    labels = {r.pair: r.faithful for r in rows}
    return Calibration(
        pairs=len(labels),
        unfaithful=sum(1 for v in labels.values() if not v),
        checks=figures,
        agreement=agreement,
        warn_only=warn_only,
        battery_if_failing=if_failing,
    )


def _label(check: str, checker: str) -> str:
    return f"{check} ({checker})" if checker else check


def _r(rate: Rate) -> str:
    if rate.value is None:
        return "– (0)"
    iv = f"[{100 * rate.low:.1f}, {100 * rate.high:.1f}]"
    return f"{100 * rate.value:.1f} % {iv} ({rate.k}/{rate.n})"


def render_calibration(cal: Calibration) -> str:
    """A Markdown table of the figures (and the per-error-type recall, and agreement)."""
    lines = [
        f"{cal.pairs} labelled pairs, {cal.unfaithful} unfaithful",
        "",
        "| check | checker | judged | skip | recall on unfaithful [95% Wilson] "
        "| false flags on faithful | precision |",
        "|---|---|---:|---:|---|---|---|",
    ]
    warned = set(cal.warn_only)
    for f in cal.checks:
        name = f.check + (" (only warns)" if _label(f.check, f.checker) in warned else "")
        lines.append(
            f"| {name} | {f.checker or '-'} | {f.judged} | {f.skipped} | {_r(f.recall)} "
            f"| {_r(f.false_flag)} | {_r(f.precision)} |"
        )
    if cal.warn_only:
        from math2.checks.lints.common import PRECISION_BAR

        bat = cal.battery_if_failing
        lines += [
            "",
            f"Only warn ({len(cal.warn_only)}): {', '.join(cal.warn_only)}. Their findings are "
            "reported but fail no pair (a lint whose precision on the labelled dev set is under "
            f"{100 * PRECISION_BAR:.0f} %, or not measured: checks/lints/precision.json), so the "
            "battery row counts none of them.",
        ]
        if bat is not None:
            lines.append(
                f"If they failed a pair, the battery would flag {_r(bat.recall)} of the "
                f"unfaithful pairs and {_r(bat.false_flag)} of the faithful ones "
                f"(precision {_r(bat.precision)})."
            )
    types = sorted({t for f in cal.checks for t in f.per_error_type})
    if types:
        lines += [
            "",
            "Recall per error type:",
            "",
            "| check | checker | " + " | ".join(types) + " |",
        ]
        lines.append("|---|---|" + "---|" * len(types))
        for f in cal.checks:
            cells = [_r(f.per_error_type[t]) if t in f.per_error_type else "–" for t in types]
            lines.append(f"| {f.check} | {f.checker or '-'} | " + " | ".join(cells) + " |")
    for check, a in cal.agreement.items():
        lines += [
            "",
            f"Agreement of {', '.join(a['judges'])} on {check} ({a['pairs']} pairs): "
            f"Fleiss' κ = {a['fleiss_kappa']:.3f}",
        ]
    return "\n".join(lines) + "\n"
