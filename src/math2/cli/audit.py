"""`math2 audit sample|grade|report`: the sample audit of accepted pairs (K9.7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, fail, out

audit_app = typer.Typer(
    help="The sample audit: draw, grade (from a file), report.", no_args_is_help=True
)
app.add_typer(audit_app, name="audit")


@audit_app.command("sample")
def sample_cmd(
    name: Annotated[str, typer.Option(help="Name of the drawing.")],
    per_stratum: Annotated[
        int | None, typer.Option(help="Pairs drawn per (role, library, stratum).")
    ] = None,
    fraction: Annotated[float | None, typer.Option(help="Fraction of each cell instead.")] = None,
    pairs: Annotated[
        Path | None,
        typer.Option("--from", help="JSONL of pairs (role/library/stratum) instead of the store."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the drawing.")] = 0,
) -> None:
    """Draw a stratified sample of accepted pairs into the store."""
    from math2.audit import candidates_from_file, candidates_from_store, draw
    from math2.errors import InputError

    if (per_stratum is None) == (fraction is None):
        raise fail("give --per-stratum N or --fraction F")
    store = _store(migrate=True)
    try:
        with store.session() as s:
            cands = candidates_from_file(pairs) if pairs else candidates_from_store(s)
            if not cands:
                raise fail("no accepted pairs to draw from")
            report = draw(s, name, cands, per_stratum=per_stratum, fraction=fraction, seed=seed)
    except (InputError, ValueError) as exc:
        raise fail(str(exc)) from exc
    table = Table("role", "library", "stratum", "population", "sampled")
    for (role, library, stratum), (pop, got) in report.items():
        table.add_row(role, library, stratum, str(pop), str(got))
    out.print(table)


@audit_app.command("grade")
def grade_cmd(
    grades: Annotated[Path, typer.Argument(help="JSONL or CSV: sample|pair_key, grade, reason.")],
    name: Annotated[str, typer.Option(help="Name of the drawing.")],
    grader: Annotated[
        str | None, typer.Option(help="Grader for rows without a grader field.")
    ] = None,
) -> None:
    """Store a person's grades (correct / minor / major, with the reason) from a file."""
    from math2.audit import import_grades
    from math2.errors import InputError

    store = _store(migrate=True)
    try:
        with store.session() as s:
            counts = import_grades(s, name, grades, grader)
    except InputError as exc:
        raise fail(str(exc)) from exc
    out.print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


@audit_app.command("report")
def report_cmd(
    name: Annotated[str, typer.Option(help="Name of the drawing.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of tables.")] = False,
) -> None:
    """Error rate with 95% Wilson intervals per role and stratum; each check against grades."""
    from math2.audit import audit_report

    store = _store(migrate=True)
    with store.session() as s:
        rep = audit_report(s, name)
    if not rep.rates:
        raise fail(f"the audit {name!r} has no samples")
    if as_json:
        out.print_json(json.dumps(rep.model_dump(mode="json")))
        return
    t = Table(
        "role",
        "stratum",
        "graded/drawn",
        "correct",
        "minor",
        "major",
        "error rate (95% CI)",
        "major rate (95% CI)",
        title=f"audit {escape(name)}",
    )
    for r in rep.rates:
        t.add_row(
            r.role,
            r.stratum,
            f"{r.graded}/{r.samples}",
            str(r.correct),
            str(r.minor),
            str(r.major),
            f"{_pct(r.error_rate)} [{_pct(r.error_low)}, {_pct(r.error_high)}]",
            f"{_pct(r.major_rate)} [{_pct(r.major_low)}, {_pct(r.major_high)}]",
        )
    out.print(t)
    c = Table(
        "check",
        "checker",
        "judged",
        "flagged",
        "precision",
        "recall",
        "lets through",
        "errors",
        title="checks against the grades",
    )
    for q in rep.checks:
        c.add_row(
            q.check,
            q.checker or "-",
            str(q.judged),
            str(q.flagged),
            _pct(q.precision),
            _pct(q.recall),
            str(q.lets_through),
            str(q.errors),
        )
    out.print(c)
    if rep.calibration is not None:
        from math2.checks.calibration import render_calibration

        out.print("\nThe same figures as `math2 check --labels` (a grade other than correct is")
        out.print("unfaithful; its error type is the grade):\n")
        out.print(escape(render_calibration(rep.calibration)), highlight=False, soft_wrap=True)
