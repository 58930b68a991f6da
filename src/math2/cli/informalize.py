"""`math2 informalize --library mathlib`: Lean declarations in, informal statements out (Herald)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, err, fail, out, state
from math2.cli._executor import Address, Executor, RaySet, ray_options
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.roles.informalize import Decl, InformalizeResult
    from math2.runs import RunSummary


@app.command("informalize")
def informalize_cmd(
    model: Annotated[str, typer.Option(help="Writer model, registered.")],
    translator: Annotated[str, typer.Option(help="Back-translation model (a second model).")],
    nli: Annotated[str | None, typer.Option(help="NLI model (default: the translator).")] = None,
    library: Annotated[str, typer.Option(help="Library whose declarations are written.")] = (
        "mathlib"
    ),
    limit: Annotated[
        int | None,
        typer.Option(
            help="Only N: the first N of the dependency order of the closure of the library's "
            "first N declarations (only that closure is read)."
        ),
    ] = None,
    lean_dir: Annotated[
        Path | None, typer.Option(help="A Lean source tree instead of the store's mentions.")
    ] = None,
    tactics: Annotated[
        Path | None,
        typer.Option(help="lean_scout tactics folder: each goal state a statement (Herald)."),
    ] = None,
    augment: Annotated[
        list[str] | None,
        typer.Option(help="equivalence | abstraction | omission | translation (repeat)."),
    ] = None,
    language: Annotated[str, typer.Option(help="Language of the translation.")] = "French",
    max_tokens: Annotated[int, typer.Option(help="Longest reply of the writer.")] = 1024,
    check_max_tokens: Annotated[
        int | None, typer.Option(help="Longest reply of the back-translation and NLI calls.")
    ] = None,
    executor: Executor = "local",
    address: Address = None,
    ray_set: RaySet = None,
) -> None:
    """Write the informal statement of each declaration in dependency order; check; store."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import InputError, Math2Error
    from math2.llm import EndpointDown
    from math2.roles.informalize import AUGMENTATIONS, InformalizeOptions, run_informalize

    bad = [a for a in augment or [] if a not in AUGMENTATIONS]
    if bad:
        raise fail(f"unknown augmentation {', '.join(bad)}; choose from {', '.join(AUGMENTATIONS)}")
    if lean_dir and tactics:
        raise fail("give --lean-dir or --tactics, not both")
    for p in (lean_dir, tactics):
        if p is not None and not p.is_dir():
            raise fail(f"{p}: no such folder")
    options = InformalizeOptions(
        model=model,
        translator=translator,
        nli=nli,
        library=library,
        limit=limit,
        lean_dir=str(lean_dir.resolve()) if lean_dir else None,
        tactics_dir=str(tactics.resolve()) if tactics else None,
        augment=augment or [],
        language=language,
        max_tokens=max_tokens,
        check_max_tokens=check_max_tokens,
    )
    verdicts: Counter[str] = Counter()  # each written statement by the battery's verdict

    def tally(_rec: Decl, result: InformalizeResult) -> None:
        verdicts["accepted" if result.accepted else result.verdict] += 1

    store = _store(migrate=True)
    ray = ray_options(executor, address, store, ray_set)
    try:
        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_informalize(
                    state.settings, store, options, on_progress=show, on_result=tally, ray=ray
                )
            )
    except EndpointDown as exc:  # the run stopped early; its unfinished items wait for a resume
        raise fail(escape(str(exc)), code=1) from exc
    except (InputError, Math2Error) as exc:
        raise fail(str(exc)) from exc
    out.print(
        escape(summary_line(summary, verdicts, options.translator, options.nli)),
        highlight=False,
        soft_wrap=True,
    )
    out.print(escape(f"see `math2 runs show {summary.run_id}`; the texts wait for review"))
    finish_run(store, summary.run_id, "declarations")


def summary_line(
    summary: RunSummary, verdicts: Counter[str], translator: str, nli: str | None
) -> str:
    """The end of `math2 informalize`: the statements accepted and those not, by the battery's
    verdict (`error`: a check could not decide, never accepted), and what judged them — no Lean
    runs here: the declarations are read as text."""
    rejected = {v: n for v, n in sorted(verdicts.items()) if v != "accepted"}
    why = ", ".join(f"{v} {n}" for v, n in rejected.items())
    return (
        f"run {summary.run_id}: {summary.done} written this time ({verdicts['accepted']} accepted "
        f"by the checks, {sum(rejected.values())} not{f': {why}' if why else ''}), "
        f"{summary.failed} stopped by an exception, {summary.skipped} already finished; no Lean "
        f"ran: the checks are the lints and {translator}'s back-translation compared by "
        f"{nli or translator}"
    )
