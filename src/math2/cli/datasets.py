"""`math2 datasets build`: SFT + RL data from a formalize run, decontaminated, with a card."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, fail, out, state

datasets_app = typer.Typer(help="Training data from formalize runs.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("build")
def build_cmd(
    run: Annotated[int, typer.Option(help="The formalize run (see `math2 runs list`).")],
    folder: Annotated[Path, typer.Argument(help="Output folder (datasets.load_dataset reads it).")],
    trace_model: Annotated[str, typer.Option(help="Model that writes the traces, registered.")],
    source: Annotated[str, typer.Option(help="Where the run's statements came from.")],
    licence: Annotated[str, typer.Option(help="SPDX licence of those statements.")],
    provenance: Annotated[str, typer.Option(help="Provenance line for the card.")] = "",
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Benchmarks to decontaminate against (default: MATH2_BENCHMARKS, else the "
            "fate-m data set).",
        ),
    ] = None,
) -> None:
    """Reconstruct traces (resumable), build the RL prompt set, decontaminate, export."""
    import asyncio

    from math2.cli.eval import benchmarks_dir
    from math2.datasets import build_dataset
    from math2.errors import Math2Error
    from math2.eval import shared_registry

    data = benchmarks_dir(data)
    if not data.exists():
        raise fail(f"{data}: no benchmark folder (needed for decontamination)")
    try:
        summary = asyncio.run(
            build_dataset(
                state.settings,
                _store(migrate=True),
                run,
                folder,
                trace_model=trace_model,
                source=source,
                licence=licence,
                registry=shared_registry(data),
                provenance=provenance,
                benchmarks_dir=data,
            )
        )
    except Math2Error as exc:
        raise fail(str(exc)) from exc
    out.print(
        escape(
            f"{folder}: {summary.sft} SFT records, {summary.rl} RL prompts; decontamination "
            f"dropped {summary.sft_decontam.contaminated} + {summary.rl_decontam.contaminated}"
        )
    )
