"""`math2 data fetch [NAME…]` and `math2 data status`: the external data sets (math2.data)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from math2.cli._common import app, err, fail, out, state

data_app = typer.Typer(
    help="The external data sets (data/external.yaml): fetch them at their pins, see where.",
    no_args_is_help=True,
)
app.add_typer(data_app, name="data")


def _say(message: str) -> None:
    err.print(escape(message), highlight=False)


@data_app.command("fetch")
def fetch_cmd(
    names: Annotated[
        list[str] | None, typer.Argument(help="Data sets to fetch (default: every set).")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--from", help="Fetch the one set named from this git repository (a mirror)."),
    ] = None,
) -> None:
    """Fetch data sets at their pins into math2's data cache (`data.cache_dir`/data), each file
    checked against its SHA-256; a set already there and whole is not fetched again. Exit 2 when
    a set could not be had."""
    from math2.data import DataMismatch, DataMissing, FetchError, fetch_set, load_external

    manifest = load_external(state.settings.data.external)
    wanted = names or manifest.names()
    unknown = [n for n in wanted if n not in manifest.names()]
    if unknown:
        raise fail(
            f"no data set named {', '.join(map(repr, unknown))}; the sets: "
            f"{', '.join(manifest.names())}"
        )
    if source and len(wanted) != 1:
        raise fail("--from names one repository: give exactly one data set with it")
    failed = []
    for name in wanted:
        try:
            folder = fetch_set(state.settings, name, progress=_say, url=source)
        except (FetchError, DataMissing, DataMismatch) as exc:
            ds = manifest.get(name)
            err.print(
                f"[bold red]error:[/] {escape(name)}: could not be had ({escape(str(exc))}); "
                f"MATH2_DATA__DIR can name a folder holding {escape(ds.folder)}/",
                highlight=False,
            )
            failed.append(name)
            continue
        out.print(f"{name:<24} {escape(str(folder))}", highlight=False)
    if failed:
        raise typer.Exit(2)


@data_app.command("status")
def status_cmd() -> None:
    """Every data set: present and hash-checked or not, where from, at which pin. Exit 2 when one
    is missing or refused."""
    from math2.data import Origin, status

    rows = status(state.settings)
    for r in rows:
        pin = f"{r.repository.removeprefix('https://github.com/')} @ {r.commit[:12]}"
        if r.ok:
            where = f"{r.origin.value}: {r.folder}"
            if r.origin is Origin.CACHE and r.fetched_from:
                where += f" (fetched from {r.fetched_from})"
            state_ = f"ok, {r.files} files" + (f" · {r.note}" if r.note else "")
        elif r.origin is Origin.NONE:
            where, state_ = "missing", r.problem or ""
        else:
            where, state_ = f"{r.origin.value}: {r.folder}", r.problem or ""
        out.print(
            escape(f"{r.name:<22} {pin:<55} {r.licence:<11} {where} · {state_}"),
            highlight=False,
            soft_wrap=True,  # one line a set, however long
        )
    bad = [r.name for r in rows if not r.ok]
    if bad:
        out.print(
            escape(
                f"{len(bad)} of {len(rows)} data sets not here or refused: {', '.join(bad)} "
                f"(`math2 data fetch {' '.join(bad)}`, or MATH2_DATA__DIR)"
            ),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)
    out.print(f"all {len(rows)} data sets here and checked", highlight=False)
