"""`math2 align`: judge candidate pairs into crosswalk edges (the align role)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, err, fail, out, state
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.roles.align import AlignResult
    from math2.store import Store


def _searcher(settings, store, index_library: str):
    from math2.retrieval import NoIndex, Searcher

    searcher = Searcher(Path(settings.retrieval.index_dir))
    try:
        searcher.scope(index_library)
    except NoIndex as exc:
        raise fail(str(exc)) from exc
    return lambda q, k: [(h.name, h.mention_id) for h in searcher.search(q, index_library, k)]


@app.command("align")
def align_cmd(
    model: Annotated[str, typer.Option(help="Judge model, registered.")],
    dataset: Annotated[
        str | None, typer.Option(help="Only candidates this source proposed (e.g. stacks-mathlib).")
    ] = None,
    library: Annotated[
        str | None,
        typer.Option(
            help="Propose candidates first: search Mathlib for this library's nodes without a "
            "Lean binding (e.g. setmm), then judge them."
        ),
    ] = None,
    systems: Annotated[
        bool,
        typer.Option(
            "--systems",
            help="Propose candidates first between Mathlib and each of the six other systems "
            "whose library is stored (Rocq, HOL Light, HOL4, Naproche, PVS, ACL2: by name, and "
            "by the lists' facts searched in the system's index), then judge each system's.",
        ),
    ] = False,
    top_k: Annotated[int, typer.Option(help="Search hits proposed per node.")] = 3,
    index: Annotated[str, typer.Option(help="Library whose search index is used.")] = "mathlib",
    limit: Annotated[int | None, typer.Option(help="At most N nodes (or N pairs).")] = None,
) -> None:
    """Judge candidate pairs: `same` becomes an edge and a proposed binding; others keep reasons."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import Math2Error
    from math2.roles.align import AlignOptions, propose_by_search, run_align

    if limit is not None and limit < 1:
        raise fail("--limit must be at least 1")
    settings = state.settings
    store = _store(migrate=True)
    if systems:
        _align_systems(settings, store, model, top_k, limit)
        return
    try:
        if library is not None:
            search = _searcher(settings, store, index)
            with store.session() as s:
                n = propose_by_search(s, library, search, limit=limit, k=top_k)
            out.print(f"{n} new candidate pairs from search for {escape(library)}")
            dataset = dataset or library
        options = AlignOptions(model=model, dataset=dataset, limit=None if library else limit)
        outcomes: dict[str, int] = {}

        def tally(_rec, result) -> None:
            outcomes[result.outcome.value] = outcomes.get(result.outcome.value, 0) + 1

        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_align(settings, store, options, on_progress=show, on_result=tally)
            )
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc
    _report(store, summary, "judged", outcomes, "nothing to judge", "pairs")


def _align_systems(
    settings: Settings, store: Store, model: str, top_k: int, limit: int | None
) -> None:
    """`math2 align --systems`: candidates per system (counted), then each system's judged."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import Math2Error
    from math2.retrieval import NoIndex, Searcher
    from math2.roles.align import AlignOptions, propose_for_systems, run_align

    searcher = Searcher(Path(settings.retrieval.index_dir))
    no_index: set[str] = set()

    def search(library: str, query: str, k: int) -> list[tuple[str, int | None]]:
        if library in no_index:
            return []
        try:
            searcher.scope(library)
        except NoIndex:
            no_index.add(library)
            return []
        return [(h.name, h.mention_id) for h in searcher.search(query, library, k)]

    try:
        with store.session() as s:
            proposed = propose_for_systems(s, search, k=top_k)
        for c in proposed:
            facts = "no search index: facts not searched" if c.source in no_index else (
                f"{c.by_facts} by the lists' facts ({c.nodes_with_facts} nodes; human link in "
                f"the top {top_k}: {c.human_in_top} of {c.human_links})"
            )  # fmt: skip
            out.print(
                f"{c.system} ({escape(c.source)}): {c.candidates} new candidates, "
                f"{c.by_name} by name, {escape(facts)}"
            )
        for c in proposed:
            options = AlignOptions(model=model, dataset=c.source, limit=limit)
            outcomes: dict[str, int] = {}

            def tally(
                _rec: object, result: AlignResult, outcomes: dict[str, int] = outcomes
            ) -> None:
                outcomes[result.outcome.value] = outcomes.get(result.outcome.value, 0) + 1

            with ProgressDisplay(err) as show:
                summary = asyncio.run(
                    run_align(settings, store, options, on_progress=show, on_result=tally)
                )
            _report(store, summary, f"judged ({c.system})", outcomes, "nothing to judge", "pairs")
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc


bindings_app = typer.Typer(
    help="Bindings: proposed → checked by Lean → reviewed (confirm in `math2 serve`).",
    no_args_is_help=True,
)
app.add_typer(bindings_app, name="bindings")


@bindings_app.command("propose")
def bindings_propose(
    source: Annotated[
        str | None, typer.Option(help="Only the edges this source gave (e.g. 1000-plus).")
    ] = None,
) -> None:
    """Propose a binding for each accepted same_as crosswalk edge to a Lean declaration."""
    from math2.roles.align import propose_from_crosswalks

    store = _store(migrate=True)
    with store.session() as s:
        n = propose_from_crosswalks(s, source)
    out.print(f"{n} bindings proposed from crosswalk edges (check them: `math2 bindings check`)")


@bindings_app.command("check")
def bindings_check(
    lean: Annotated[str | None, typer.Option(help="Lean backend: repl | kimina | lake.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most N bindings.")] = None,
) -> None:
    """Check each proposed binding (and each whose check failed) with Lean at the pinned build:
    hygiene, compile, axioms, the build's type hash. Resumable: `math2 runs resume ID`."""
    import asyncio

    from math2.cli._common import check_backend, check_range
    from math2.cli._progress import ProgressDisplay
    from math2.errors import Math2Error
    from math2.roles.align import CheckOptions, run_check

    check_range("--limit", limit, 1)
    check_backend(lean)
    store = _store(migrate=True)
    tally: dict[str, int] = {}

    def count(_rec, result) -> None:
        tally[result.status.value] = tally.get(result.status.value, 0) + 1

    try:
        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_check(
                    state.settings,
                    store,
                    CheckOptions(lean_backend=lean, limit=limit),
                    on_progress=show,
                    on_result=count,
                )
            )
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc
    _report(store, summary, "checked", tally, "nothing to check", "bindings")


def _report(store, summary, verb: str, tally: dict[str, int], empty: str, what: str) -> None:
    """The run's line (what this invocation did, by outcome), then its failures (`finish_run`)."""
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())) or empty
    out.print(
        f"run {summary.run_id}: {summary.done} {verb} this time ({counts}), "
        f"{summary.failed} failed, {summary.skipped} already finished"
    )
    finish_run(store, summary.run_id, what)
