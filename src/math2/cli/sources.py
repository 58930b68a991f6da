"""`math2 init` and `math2 sources …`: the store and the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, fail, out, state
from math2.errors import InputError

sources_app = typer.Typer(
    help="The sources manifest and intake classes (K06).", no_args_is_help=True
)
app.add_typer(sources_app, name="sources")


@app.command()
def init(
    manifest: Annotated[Path | None, typer.Option(help="Manifest to load.")] = None,
) -> None:
    """Create or migrate the store and load the sources manifest into it."""
    from math2.sources import load_manifest, sync_manifest

    try:
        m = load_manifest(manifest or state.settings.manifest)
    except InputError as exc:
        raise fail(str(exc)) from exc
    store = _store(migrate=True, create=True)
    with store.session() as s:
        rep = sync_manifest(s, m)
    out.print(
        f"store ready at {store.engine.url.render_as_string(hide_password=True)}; "
        f"{len(m.sources)} sources ({len(rep.added)} new, {len(rep.updated)} changed, "
        f"{len(rep.new_pins)} new pins)"
    )
    for change in rep.class_changes:
        out.print(f"  class changed: {change}")


@sources_app.command("check")
def sources_check(
    file: Annotated[Path | None, typer.Argument(help="Manifest file.")] = None,
) -> None:
    """Validate the manifest; print each source with its derived class and deciding rule."""
    from math2.sources import load_manifest

    try:
        m = load_manifest(file or state.settings.manifest)
    except InputError as exc:
        raise fail(str(exc)) from exc
    table = Table(title=f"{m.path}: {len(m.sources)} sources", show_lines=False)
    for col in ("source", "kind", "system", "licence", "authored", "pin", "class", "decided by"):
        table.add_column(col, overflow="fold")
    for s in m.sources:
        pin = s.current_pin
        if s.per_item_licence:
            decisions = s.decide_items()
            cls = "per item: " + ", ".join(f"{d.licence}→{d.label}" for d in decisions)
            rule = decisions[0].rule.value
        else:
            d = s.decide()
            cls, rule = d.label, f"{d.rule.value}: {d.reason}"
        table.add_row(
            s.name,
            s.kind.value,
            s.system,
            s.licence_at(),
            s.authored.value,
            (pin.key[:12] if pin else "unpinned"),
            cls,
            rule,
        )
    out.print(table)


@sources_app.command("show")
def sources_show(name: Annotated[str, typer.Argument(help="Source name.")]) -> None:
    """Show one source of the manifest: every field, each pin and the class at each pin."""
    from math2.sources import load_manifest

    try:
        m = load_manifest(state.settings.manifest)
        entry = m.get(name)
    except InputError as exc:
        raise fail(str(exc)) from exc
    except KeyError as exc:
        raise fail(f"no source named {name!r} in {state.settings.manifest}") from exc
    data = entry.model_dump(mode="json", exclude_none=True, exclude={"pins"}, by_alias=True)
    for k, v in data.items():
        out.print(f"[bold]{k}[/]: " + escape(str(v)), highlight=False)
    for pin in entry.pins:
        d = entry.decide(pin)
        tc = f" ({pin.toolchain})" if pin.toolchain else ""
        out.print(
            f"[bold]pin[/] {pin.key}{tc}: licence {entry.licence_at(pin)} → {d.label} "
            + escape(f"[{d.rule.value}: {d.reason}]"),
            highlight=False,
        )
    if entry.per_item_licence:
        for d in entry.decide_items():
            out.print(f"[bold]item licence[/] {d.licence} → {d.label} " + escape(f"[{d.reason}]"))
    elif not entry.pins:
        d = entry.decide()
        out.print(f"[bold]class[/] {d.label} " + escape(f"[{d.rule.value}: {d.reason}]"))
