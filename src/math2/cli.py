"""The `math2` command line: thin wrappers over the library."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from math2.config import Settings, load_settings
from math2.errors import InputError, Math2Error

app = typer.Typer(
    help="math2: a corpus of mathematics, informal and formal side by side.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
sources_app = typer.Typer(
    help="The sources manifest and intake classes (K06).", no_args_is_help=True
)
app.add_typer(sources_app, name="sources")
lean_app = typer.Typer(
    help="Lean verification: check files and statements, set Lean up.", no_args_is_help=True
)
app.add_typer(lean_app, name="lean")

out = Console(soft_wrap=False, width=200)
err = Console(stderr=True, soft_wrap=True)


class State:
    """Per-invocation options shared by all commands."""

    settings: Settings


state = State()


@app.callback()
def _main(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="More logging (-v info, -vv debug).")
    ] = 0,
    db: Annotated[
        str | None, typer.Option("--db", help="Store URL or SQLite path (default: MATH2_DB_URL).")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    overrides = {"db_url": db} if db else {}
    state.settings = load_settings(**overrides)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error to stderr and return the Exit to raise."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)


def _store(migrate: bool = False):
    from math2.store import open_store

    return open_store(state.settings.db_url, migrate=migrate)


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
    store = _store(migrate=True)
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


def _mathlib_pin() -> tuple[str, str]:
    """(toolchain, Mathlib commit): from the settings, else the manifest's Mathlib pin."""
    lean = state.settings.lean
    if lean.toolchain and lean.mathlib_commit:
        return lean.toolchain, lean.mathlib_commit
    from math2.sources import load_manifest

    pin = load_manifest(state.settings.manifest).get("mathlib").current_pin
    assert pin is not None and pin.toolchain and pin.commit
    return lean.toolchain or pin.toolchain, lean.mathlib_commit or pin.commit


@lean_app.command("check")
def lean_check(
    file: Annotated[Path, typer.Argument(help="A .lean file, or .jsonl with one item a line.")],
    mode: Annotated[
        str | None,
        typer.Option(
            help="statement | proof | plain (default: plain for .lean, statement for .jsonl)"
        ),
    ] = None,
    backend: Annotated[str | None, typer.Option(help="repl | kimina | lake")] = None,
    cache: Annotated[bool, typer.Option(help="Use the result cache in the store.")] = True,
    concurrency: Annotated[int, typer.Option(help="Checks in flight at once.")] = 8,
) -> None:
    """Check Lean code; print a verdict per item; exit 1 when any item fails."""
    import asyncio

    from math2.lean import LeanNotConfigured, Mode, make_checker
    from math2.lean.items import load_items

    try:
        items = load_items(file, Mode(mode) if mode else None)
    except (InputError, ValueError) as exc:
        raise fail(str(exc)) from exc
    toolchain, commit = _mathlib_pin()
    settings = state.settings.model_copy(
        update={
            "lean": state.settings.lean.model_copy(
                update={"toolchain": toolchain, "mathlib_commit": commit}
            )
        }
    )
    store = _store(migrate=True) if cache else None
    try:
        checker = make_checker(settings, store, backend)
    except LeanNotConfigured as exc:
        raise fail(str(exc)) from exc

    async def go() -> list:
        results = []
        try:
            async for r in checker.check_many(items, concurrency=concurrency):
                mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
                out.print(
                    f"{mark} {r.id:<30} {r.status.value:<12} "
                    + escape(r.reason.splitlines()[0] if r.reason else "")
                )
                results.append(r)
        finally:
            await checker.backend.close()
        return results

    results = asyncio.run(go())
    failed = sum(not r.passed for r in results)
    out.print(f"{len(results)} checked: {len(results) - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(1)


@lean_app.command("setup")
def lean_setup(
    project_dir: Annotated[
        Path | None, typer.Option(help="Where the Lake project goes (default ~/.math2/lean/check).")
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Only say what is missing.")] = False,
) -> None:
    """Install the toolchain, Mathlib (with `lake exe cache get`) and the REPL, where possible."""
    from math2.lean import install

    toolchain, commit = _mathlib_pin()
    project = (
        project_dir
        or state.settings.lean.project_dir
        or (Path.home() / ".math2" / "lean" / "check")
    )
    steps = install.plan(Path(project), toolchain, commit)
    for st in steps:
        out.print(f"{'ok' if st.done else 'missing':<8} {st.name}: {st.detail}", highlight=False)
    if dry_run or all(st.done for st in steps):
        missing = [st.name for st in steps if not st.done]
        if missing:
            out.print("missing: " + ", ".join(missing) + " (run without --dry-run to install)")
        return
    try:
        install.run(steps, Path(project), toolchain, commit, echo=out.print)
    except install.SetupFailed as exc:
        raise fail(str(exc)) from exc
    out.print(
        f'Lean is set up. Put this in math2.toml:\n[lean]\nproject_dir = "{project}"\n'
        f'toolchain = "{toolchain}"\nmathlib_commit = "{commit}"'
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
    )
    for col in cols:
        table.add_column(col, justify="left" if col in ("source", "class", "authored") else "right")
    for r in report.sources:
        if not (r.mentions_active or r.mentions_retired or r.crosswalks or r.crosswalk_candidates):
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
        )
    out.print(table)
    empty = [r.name for r in report.sources if not (r.mentions_active or r.crosswalks)]
    out.print(f"sources with nothing in the store yet ({len(empty)}): {', '.join(empty)}")
    out.print(f"nodes: {report.nodes}  by selection signal: {report.nodes_by_selection or '-'}")
    out.print(
        f"bindings: {report.bindings}  to ai/mixed libraries: {report.bindings_to_ai} "
        f"({report.ai_binding_share:.1%})  crosswalk edges: {report.crosswalks}"
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


def _import(name: str, path: Path | None):
    """Import one source and print the outcome; exit 1 when it failed."""
    from math2.build import import_one

    try:
        store = _store(migrate=True)
        outcome = import_one(state.settings, store, name, path)
    except (InputError, KeyError) as exc:
        raise fail(str(exc)) from exc
    _print_outcome(outcome)
    if outcome.status == "failed":
        raise typer.Exit(1)
    return store, outcome


@app.command("import")
def import_cmd(
    source: Annotated[str, typer.Argument(help="Manifest name of the source (e.g. setmm).")],
    path: Annotated[Path | None, typer.Argument(help="Where its data is (default: look).")] = None,
) -> None:
    """Import one source at its pin (nothing is written if its data is malformed)."""
    _import(source, path)


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
    except (InputError, KeyError) as exc:
        raise fail(str(exc)) from exc
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
    with store.session() as s:
        cluster(s)
        rep = select_nodes(s, library, [*state.settings.select.requests, *(request or [])])
    for k, v in rep.model_dump().items():
        out.print(f"{k}: {v}")
    out.print(f"selected declarations: {rep.total}")


index_app = typer.Typer(help="The search index over declarations.", no_args_is_help=True)
app.add_typer(index_app, name="index")


@index_app.command("build")
def index_build(
    library: Annotated[str, typer.Option(help="Whose declarations.")] = "mathlib",
    dense: Annotated[bool, typer.Option(help="Also compute MiniLM embeddings (resumable).")] = True,
    limit: Annotated[int | None, typer.Option(help="Only the first N declarations.")] = None,
) -> None:
    """Build (or resume) the BM25 + dense + PageRank index of a library's declarations."""
    from math2.retrieval.index import build_index

    folder = Path(state.settings.retrieval.index_dir) / library
    try:
        meta = build_index(
            _store(), folder, library, dense=dense, limit=limit, progress=lambda m: err.print(m)
        )
    except LookupError as exc:
        raise fail(str(exc)) from exc
    out.print(f"index of {meta['count']} declarations at {folder}")


def _built_index(library: str) -> Path:
    """The folder of a library's index; exit 2 with what to run when there is none."""
    folder = Path(state.settings.retrieval.index_dir) / library
    if not (folder / "meta.json").exists():
        raise fail(f"no index at {folder}: run `math2 build` or `math2 index build`")
    return folder


@index_app.command("serve")
def index_serve(
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1.")] = 8765,
    library: Annotated[str, typer.Option(help="Whose index.")] = "mathlib",
) -> None:
    """Answer `GET /search?q=…&k=10` with JSON hits from the index (until interrupted)."""
    from math2.retrieval.index import SearchIndex
    from math2.retrieval.server import make_server

    folder = _built_index(library)
    server = make_server(SearchIndex(folder), port=port)
    out.print(f"serving {folder} on http://127.0.0.1:{server.server_address[1]}/search?q=…")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for, in words or Lean.")],
    k: Annotated[int, typer.Option("-k", help="How many results.")] = 10,
    library: Annotated[str, typer.Option(help="Whose index.")] = "mathlib",
) -> None:
    """Search the declarations of a library (BM25 + dense + dependency prior, fused)."""
    from sqlalchemy import select

    from math2.retrieval.index import SearchIndex
    from math2.store import Mention

    folder = _built_index(library)
    index = SearchIndex(folder)
    hits = index.search(query, k)
    store = _store()
    with store.session() as s:
        rows = {
            m.id: m
            for m in s.scalars(select(Mention).where(Mention.id.in_([h.mention_id for h in hits])))
        }
    if not index.has_dense:
        err.print("note: no dense embeddings in this index; BM25 and the prior only")
    for i, h in enumerate(hits, 1):
        m = rows.get(h.mention_id)
        stmt = (m.statement or "")[:120] if m else ""
        out.print(f"{i:>2}. {h.name}  [dim]{h.score:.4f}[/]\n    " + escape(stmt), highlight=False)


@app.command("build")
def build_cmd() -> None:
    """The main job: import every source this machine has, build what follows, print the report."""
    from math2.build import build
    from math2.report import build_report

    try:
        store = _store(migrate=True)
        summary = build(
            state.settings,
            store,
            on_outcome=_print_outcome,
        )
    except InputError as exc:
        raise fail(str(exc)) from exc
    for step, status in summary.steps:
        out.print(f"{'step':>8}  {step:<28} {status}")
    with store.session() as s:
        print_report(build_report(s))
    failed = [o.source for o in summary.outcomes if o.status == "failed"]
    if failed:
        raise fail(f"imports failed: {', '.join(failed)}", code=1)


def _version(value: bool) -> None:
    if value:
        from math2 import __version__

        out.print(f"math2 {__version__}")
        raise typer.Exit()


def main() -> None:
    """Entry point of the `math2` script."""
    try:
        app()
    except Math2Error as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
