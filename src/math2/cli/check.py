"""`math2 check PAIRS.jsonl`: a battery of checks on (informal, formal) pairs;
`math2 copy-index REF.jsonl --out DIR`: the n-gram index of a reference corpus for the copy check.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, check_backend, check_range, err, fail, out, state
from math2.cli._executor import Address, Executor, RaySet, ray_options
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.checks import BatteryConfig, CheckedPair, Pair
    from math2.runs import RunSummary


@app.command("check")
def check_cmd(
    pairs: Annotated[Path, typer.Argument(help="JSONL: id, informal, formal[, header, role…].")],
    judge: Annotated[
        list[str] | None, typer.Option(help="Consistency judge model (repeat: side by side).")
    ] = None,
    translator: Annotated[
        str | None, typer.Option(help="Back-translation model (formal → informal).")
    ] = None,
    nli: Annotated[
        str | None, typer.Option(help="NLI model comparing text and back-translation.")
    ] = None,
    compile_: Annotated[
        bool, typer.Option("--compile", help="Hygiene + compile through math2.lean.")
    ] = False,
    reference: Annotated[
        list[Path] | None, typer.Option(help="n-gram index folder for the copy check (repeat).")
    ] = None,
    battery: Annotated[
        Path | None, typer.Option(help="Battery file (YAML/JSON) instead of the options.")
    ] = None,
    lean_backend: Annotated[
        str | None, typer.Option("--lean", help="Lean backend: repl | kimina | lake.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.")] = None,
    labels: Annotated[
        bool,
        typer.Option(
            "--labels",
            help="The pairs carry a person's verdict (faithful: true|false, error_types): "
            "print and store each check's recall, false-flag rate and precision against it.",
        ),
    ] = False,
    calibration_out: Annotated[
        Path | None, typer.Option(help="With --labels: also write the figures as JSON here.")
    ] = None,
    executor: Executor = "local",
    address: Address = None,
    ray_set: RaySet = None,
) -> None:
    """Run the checks on every pair; verdicts go to the store (check_results), resumable."""
    check_range("--limit", limit, 1)
    check_backend(lean_backend)
    import asyncio

    from math2.checks import default_config, load_config, run_checks
    from math2.cli._progress import ProgressDisplay
    from math2.errors import InputError, Math2Error
    from math2.llm import EndpointDown

    if battery and (judge or translator or nli or compile_ or reference):
        raise fail("--battery gives the whole battery; drop the other check options")
    if nli and not translator:
        raise fail("--nli needs --translator (the back-translation it compares)")
    if calibration_out and not labels:
        raise fail("--calibration-out needs --labels")
    try:
        config = (
            load_config(battery)
            if battery
            else default_config(
                judges=judge or [],
                translator=translator,
                nli=nli,
                compile=compile_,
                references=[str(p) for p in reference or []],
            )
        )
    except InputError as exc:
        raise fail(str(exc)) from exc
    tally: Counter[tuple[str, str, str]] = Counter()
    warned: Counter[tuple[str, str]] = Counter()  # findings of checks that only warn
    overall: Counter[str] = Counter()
    lean: Counter[str] = Counter()  # the Lean behind each compile verdict

    def on_result(_pair: Pair, result: CheckedPair) -> None:
        overall[result.verdict.value] += 1
        if result.verdict.value == "pass" and any(
            o.verdict.value == "fail" and o.evidence.get("warn") for o in result.outcomes
        ):
            overall["passed on warnings only"] += 1
        for o in result.outcomes:
            tally[(o.check, o.checker, o.verdict.value)] += 1
            if o.evidence.get("warn"):
                warned[(o.check, o.checker)] += o.verdict.value == "fail"
            if o.evidence.get("compiled_by"):
                lean[o.evidence["compiled_by"]] += 1

    store = _store(migrate=True)
    ray = ray_options(executor, address, store, ray_set)
    try:
        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_checks(
                    state.settings,
                    store,
                    pairs,
                    config,
                    limit=limit,
                    lean_backend=lean_backend,
                    on_progress=show,
                    on_result=on_result,
                    ray=ray,
                )
            )
    except EndpointDown as exc:  # the run stopped early; its unfinished items wait for a resume
        raise fail(escape(str(exc)), code=1) from exc
    except (InputError, Math2Error, ValueError) as exc:
        raise fail(str(exc)) from exc
    table = Table("check", "checker", "pass", "fail", "error", "skip", "a fail fails the pair")
    for check, checker in sorted({(c, k) for c, k, _ in tally}):
        table.add_row(
            check,
            checker or "-",
            *(str(tally[(check, checker, v)]) for v in ("pass", "fail", "error", "skip")),
            "no: only warns" if (check, checker) in warned else "yes",
        )
    out.print(table)
    for line in summary_lines(summary, overall, warned, lean, compiled=config_compiles(config)):
        out.print(escape(line), highlight=False, soft_wrap=True)
    if labels:
        from math2.checks.calibration import render_calibration
        from math2.checks.job import calibrate_pairs

        try:
            cal = calibrate_pairs(store, pairs, limit=limit, run_id=summary.run_id)
        except InputError as exc:
            raise fail(str(exc)) from exc
        out.print(escape(render_calibration(cal)), highlight=False, soft_wrap=True)
        out.print(f"(stored with run {summary.run_id}: `calibration` in its params)")
        if calibration_out:
            calibration_out.write_text(cal.model_dump_json(indent=1) + "\n", encoding="utf-8")
    finish_run(store, summary.run_id, "pairs")


def config_compiles(config: BatteryConfig) -> bool:
    """Whether the battery holds the compile check (the only one that runs Lean)."""
    return any(c.check == "compile" for c in config.checks)


def summary_lines(
    summary: RunSummary,
    overall: Counter[str],
    warned: Counter[tuple[str, str]],
    lean: Counter[str],
    *,
    compiled: bool,
) -> list[str]:
    """The end of `math2 check`: each overall verdict counted (an undecided pair is an error,
    never a pass), the checks whose findings only warn, and the Lean behind the compile
    verdicts (a test double says so)."""
    verdicts = ", ".join(f"{v} {overall[v]}" for v in ("pass", "fail", "error", "skip"))
    lines = [
        f"run {summary.run_id}: {summary.done} pairs checked this time ({verdicts}); "
        f"{summary.failed} pairs stopped by an exception, {summary.skipped} already finished"
    ]
    if overall["error"]:
        lines.append(
            f"{overall['error']} pairs are `error`: a check could not decide (a model that could "
            "not be read or reached, Lean down): never a pass"
        )
    if warned:
        flagged = ", ".join(
            f"{c}{f' ({k})' if k else ''}: {n} flagged" for (c, k), n in sorted(warned.items())
        )
        lines.append(
            f"only warn — their findings fail no pair (precision under the bar on the labelled "
            f"dev set, or not measured: checks/lints/precision.json): {flagged}; if they failed "
            f"pairs, {overall['passed on warnings only']} of the pairs that passed would fail"
        )
    if not compiled:
        lines.append("no Lean ran: the battery has no compile check (--compile)")
    elif lean:
        lines.append("compiled by: " + "; ".join(sorted(lean)))
    elif summary.done:
        lines.append("compiled by: nothing reached Lean (hygiene refused every statement)")
    lines.append(f"see `math2 runs show {summary.run_id}`")
    return lines


@app.command("copy-index")
def copy_index_cmd(
    reference: Annotated[
        Path, typer.Argument(help="JSONL reference corpus (one document a line).")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Index folder to write.")],
    field: Annotated[str, typer.Option(help="Field holding the text.")] = "text",
    n: Annotated[int, typer.Option(help="n-gram length.")] = 13,
) -> None:
    """Index a reference corpus (hashed n-grams; no text is stored) for the copy check."""
    from math2.checks.ngrams import NgramIndex, NgramIndexError, iter_jsonl_texts

    if not reference.exists():
        raise fail(f"{reference}: no such file")
    try:
        index = NgramIndex.build(iter_jsonl_texts(reference, field), n=n)
    except NgramIndexError as exc:
        raise fail(str(exc)) from exc
    index.save(out_dir)
    out.print(f"{len(index.doc_ids)} documents, {index.size} distinct {n}-grams → {out_dir}")
