"""Corpus commands: import, crosswalk, bump, select, build, report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, err, fail, out, state
from math2.errors import InputError, Math2Error

_NO_WAIT = typer.Option(
    "--no-wait", help="Exit (code 2) instead of waiting when another build holds the store."
)


def print_report(report) -> None:
    """Render the corpus report as tables."""
    table = Table(title="corpus report: per source")
    cols = (
        "source",
        "class",
        "authored",
        "mentions",
        "completable",
        "retired",
        "nodes",
        "bindings",
        "crosswalks",
        "candidates",
        "aids",
    )
    for col in cols:
        table.add_column(col, justify="left" if col in ("source", "class", "authored") else "right")
    for r in report.sources:
        if not r.holds_anything:
            continue
        table.add_row(
            r.name,
            r.intake_class,
            r.authored,
            str(r.mentions_active),
            str(r.mentions_completable),
            str(r.mentions_retired),
            str(r.nodes),
            str(r.bindings),
            str(r.crosswalks),
            str(r.crosswalk_candidates),
            str(r.search_aids),
        )
    out.print(table)
    systems = Table(title="corpus report: per system")
    for col in ("system", "sources", "mentions", "nodes", "crosswalks", "linked", "candidates"):
        systems.add_column(col, justify="left" if col in ("system", "sources") else "right")
    for sr in report.systems:
        systems.add_row(
            sr.system,
            ", ".join(sr.sources) or "-",
            str(sr.mentions_active),
            str(sr.nodes),
            str(sr.crosswalks),
            str(sr.crosswalks_linked),
            str(sr.crosswalk_candidates),
        )
    out.print(systems)
    empty = report.empty_sources
    out.print(f"sources with nothing in the store yet ({len(empty)}): {', '.join(empty)}")
    out.print(f"nodes: {report.nodes}  by selection signal: {report.nodes_by_selection or '-'}")
    out.print(
        f"bindings: {report.bindings}  to ai/mixed libraries: {report.bindings_to_ai} "
        f"({report.ai_binding_share:.1%})  to statements a model wrote: "
        f"{report.bindings_generated}  by status: {report.bindings_by_status or '-'}  "
        f"crosswalk edges: {report.crosswalks}"
    )
    out.print(
        f"text by licence: {report.text_by_licence or '-'}  by author: "
        f"{report.text_by_author or '-'}"
    )
    out.print("open questions (K15), unresolved:")
    for q in report.open_questions:
        out.print(f"  - {q}")


@app.command()
def report() -> None:
    """Print the corpus report from the store."""
    from math2.report import build_report

    store = _store()
    with store.session() as s:
        print_report(build_report(s))


def _print_outcome(o) -> None:
    out.print(f"{o.status:>8}  {o.source:<28} " + escape(o.reason), highlight=False)
    if o.result is not None:
        if o.result.counts:
            counts = ", ".join(f"{k}: {v}" for k, v in o.result.counts.items())
            out.print(f"{'':>8}  {'':<28} " + escape(counts), highlight=False)
        for note in o.result.notes:
            out.print(f"{'':>8}  {'':<28} [yellow]{escape(note)}[/]")


def _say(message: str) -> None:
    err.print(escape(message), highlight=False)


def _import(name: str, path: Path | None, force: bool = False, no_wait: bool = False):
    """Import one source and print the outcome; exit 2 when it was refused or its data could
    not be had (one `error:` line saying why and how to supply it), 1 when it failed."""
    from math2.import_source import import_one

    try:
        store = _store(migrate=True, create=False)
        outcome = import_one(
            state.settings,
            store,
            name,
            path,
            force=force,
            wait=not no_wait,
            on_wait=_say,
            progress=_say,
        )
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc
    if outcome.status == "skipped":  # asked for by name, and not imported: say why, exit 2
        raise fail(f"{escape(name)} not imported: {escape(outcome.reason)}")
    _print_outcome(outcome)
    if outcome.status == "failed":
        raise typer.Exit(1)
    return store, outcome


@app.command("import")
def import_cmd(
    source: Annotated[str, typer.Argument(help="Manifest name of the source (e.g. setmm).")],
    path: Annotated[Path | None, typer.Argument(help="Where its data is (default: look).")] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Replace the data already imported at this pin (one transaction)."
        ),
    ] = False,
    no_wait: Annotated[bool, _NO_WAIT] = False,
) -> None:
    """Import one source at its pin (nothing is written if its data is malformed, empty or
    not the data at the pin)."""
    _import(source, path, force=force, no_wait=no_wait)


crosswalk_app = typer.Typer(
    help="Crosswalk lists and the clustering pass (K6.7).", no_args_is_help=True
)
app.add_typer(crosswalk_app, name="crosswalk")


@crosswalk_app.command("import")
def crosswalk_import(
    name: Annotated[str, typer.Argument(help="1000-plus or mathlib-theorem-lists.")],
    path: Annotated[Path | None, typer.Argument(help="The list's folder or file.")] = None,
) -> None:
    """Import a theorem list as nodes and crosswalk edges, then run the clustering pass."""
    from math2.crosswalk.cluster import cluster

    store, _ = _import(name, path)
    with store.session() as s:
        rep = cluster(s)
    out.print(f"clustering: {rep.model_dump()}")


@app.command("bump")
def bump_cmd(
    library: Annotated[str, typer.Argument(help="Manifest name of the library (e.g. mathlib).")],
    to: Annotated[str, typer.Option("--to", help="The new pin (commit or version).")],
    path: Annotated[Path | None, typer.Argument(help="The library's data at that pin.")] = None,
) -> None:
    """Move a library to a new pin: new, retired (with successor) and changed mentions."""
    from math2.sources import load_manifest

    try:
        entry = load_manifest(state.settings.manifest).get(library)
    except InputError as exc:
        raise fail(str(exc)) from exc
    except KeyError as exc:
        raise fail(f"no source named {library!r} in {state.settings.manifest}") from exc
    pin = entry.current_pin
    if pin is None or pin.key != to:
        raise fail(
            f"{library}'s current pin in {state.settings.manifest} is "
            f"{pin.key if pin else 'none'}, not {to}: record the new pin there first (K6.10)"
        )
    _, outcome = _import(library, path)
    if outcome.status != "imported":
        raise typer.Exit(1)


@app.command("select")
def select_cmd(
    request: Annotated[
        list[str] | None, typer.Option("--request", help="A declaration a person asks for.")
    ] = None,
    library: Annotated[str, typer.Option(help="Library whose declarations are selected.")] = (
        "mathlib"
    ),
) -> None:
    """Run node selection (K6.4) and print how many declarations each signal selected."""
    from math2.crosswalk.cluster import cluster
    from math2.crosswalk.select import select_nodes

    store = _store()
    with store.lock("build", on_wait=_say), store.session() as s:
        cluster(s)
        rep = select_nodes(s, library, [*state.settings.select.requests, *(request or [])])
    for k, v in rep.model_dump().items():
        out.print(f"{k}: {v}")
    out.print(f"selected declarations: {rep.total}")


@app.command("build")
def build_cmd(
    offline: Annotated[
        bool,
        typer.Option("--offline", help="Fetch nothing; say what is skipped and how to supply it."),
    ] = False,
    no_wait: Annotated[bool, _NO_WAIT] = False,
) -> None:
    """The main job: import every source this machine has (fetching Mathlib and the data sets
    it imports at their pins where there is a network), build the search indexes, print the
    report. Exit 1 when an import failed, 3 when Mathlib (the main library) could not be had;
    the last line says which."""
    from math2.build import build
    from math2.report import build_report

    try:
        store = _store(migrate=True, create=True)
        summary = build(
            state.settings,
            store,
            on_outcome=_print_outcome,
            offline=offline,
            wait=not no_wait,
            on_wait=_say,
            progress=_say,
        )
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc
    from math2.util.progress import stage

    for step, status in summary.steps:
        out.print(f"{'step':>8}  {step:<28} " + escape(status), highlight=False)
    with store.session() as s:
        with stage("corpus report"):
            report = build_report(s)
        print_report(report)
    err.file.flush()
    out.print(escape(summary.last_line()), highlight=False)  # the last line, whatever the code
    if summary.exit_code:
        raise typer.Exit(summary.exit_code)
