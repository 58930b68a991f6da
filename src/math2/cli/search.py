"""`math2 index …` and `math2 search`: the search index over declarations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, err, fail, out, state

index_app = typer.Typer(help="The search index over declarations.", no_args_is_help=True)
app.add_typer(index_app, name="index")


@index_app.command("build")
def index_build(
    library: Annotated[str, typer.Option(help="Whose declarations.")] = "mathlib",
    dense: Annotated[
        bool | None,
        typer.Option(
            "--dense/--no-dense",
            help="--dense embeds every declaration, so searches reorder the lexical top 30 by the "
            "encoder (over all of Mathlib: Lean-style and special-case queries up, LaTeX and "
            "nicknames down; docs/retrieval.md). Default: on for the libraries of "
            "retrieval.dense_libraries (none unless configured), and an earlier embedding of "
            "the same declarations is kept; --no-dense leaves it out. Resumable, with progress; "
            "about 28 minutes for all of Mathlib on two idle cores.",
        ),
    ] = None,
    encoder: Annotated[
        str | None,
        typer.Option(help="Dense encoder: bge-small or minilm (default: retrieval.encoder)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N declarations.")] = None,
    functor_bodies: Annotated[
        bool,
        typer.Option(
            "--functor-bodies",
            help="Keep Rocq functor-body declarations that a module includes under its own "
            "name (left out by default: search finds `Nat.add_comm`, not the functor's copy "
            "`…NZAddProp.add_comm` no user can write).",
        ),
    ] = False,
) -> None:
    """Build (or resume) the BM25 (+ search aids, + dense when asked) index of a library's
    declarations."""
    from math2.retrieval.aids import mathlib_checkout
    from math2.retrieval.encoder import ENCODERS, EncoderUnavailable, unavailable
    from math2.retrieval.index import build_index

    encoder = encoder or state.settings.retrieval.encoder
    if dense is None and library in state.settings.retrieval.dense_libraries:
        why_not = unavailable(encoder)
        if why_not:
            err.print(f"no dense part: {why_not}")
        dense = True if not why_not else None
    if encoder not in ENCODERS:
        raise fail(f"unknown encoder {encoder!r}: one of {', '.join(ENCODERS)}")
    folder = Path(state.settings.retrieval.index_dir) / library
    if limit is not None:  # a trial never replaces a fuller index (issue 46 §3)
        import json

        try:
            built = json.loads((folder / "meta.json").read_text()).get("count", 0)
        except (OSError, ValueError, AttributeError):
            built = 0
        if built > limit:
            raise fail(
                f"--limit {limit} would replace the index of {built} declarations at {folder}: "
                "for a trial index set MATH2_RETRIEVAL__INDEX_DIR to another folder, or remove "
                "this one first"
            )
    try:
        meta = build_index(
            _store(), folder, library, dense=dense, limit=limit,
            progress=lambda m: err.print(m), encoder=encoder,
            mathlib_dir=mathlib_checkout(state.settings), functor_bodies=functor_bodies,
        )  # fmt: skip
    except (LookupError, EncoderUnavailable) as exc:
        raise fail(str(exc)) from exc
    dense_part = meta.get("dense")
    out.print(
        f"index of {meta['count']} declarations at {folder}"
        + (f"; dense part: {dense_part['encoder']}" if dense_part else "; no dense part")
        + (", HNSW graph" if dense_part and dense_part.get("ann") else "")
        + (f"; {meta['functor_bodies_left_out']} functor-body declarations left out (a module "
           "includes each under its own name; --functor-bodies keeps them)"
           if meta.get("functor_bodies_left_out") else "")
    )  # fmt: skip


@index_app.command("serve")
def index_serve(
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1.")] = 8765,
    library: Annotated[str, typer.Option(help="Whose index.")] = "mathlib",
) -> None:
    """Answer `GET /search?q=…&k=10` with JSON hits from the index (until interrupted)."""
    import uvicorn

    from math2.retrieval import NoIndex, Searcher
    from math2.retrieval.server import make_app

    try:
        app_ = make_app(Searcher(Path(state.settings.retrieval.index_dir)), library)
    except NoIndex as exc:
        raise fail(str(exc)) from exc
    out.print(f"serving the {library} index on http://127.0.0.1:{port}/search?q=…")
    uvicorn.run(app_, host="127.0.0.1", port=port, log_level="warning")


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for, in words, LaTeX or Lean.")],
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="How many results.")] = 10,
    library: Annotated[
        str | None,
        typer.Option(
            help="Search this library's index, or `all` to merge every built one by a score "
            "comparable across libraries (default: the Lean project's library, else mathlib)."
        ),
    ] = None,
    rerank: Annotated[
        str | None,
        typer.Option(help="Rerank the fused top 50 with this registered model (cached)."),
    ] = None,
    ranker: Annotated[
        bool | None,
        typer.Option(
            "--ranker/--fusion",
            help="Order the hits by the learned ranker `math2 index build` trained, or by the "
            "hand-tuned fusion. Default: the ranker where the index has one (it is not below "
            "the fusion beyond noise on any query style or target kind of the dev sets; "
            "docs/benchmarks.md, issue 45 §3), else the fusion.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the hits as one JSON list (rank, name, library, mention_id, kind, "
            "module, doc, statement, renamed_from, deprecated, successor, node, informal, "
            "informal_origin, order_score: what orders this query's hits, not comparable "
            "across queries) for scripts.",
        ),
    ] = False,
) -> None:
    """Search the declarations of one library (default: Mathlib, or the library of the Lean
    project in this folder) or of every built one (`--library all`), and say what it searched.
    Indexes are memory-mapped: the store is opened only to rerank."""
    from math2.retrieval import ALL, NoIndex, Searcher
    from math2.retrieval.weights import USE_RANKER

    searcher = Searcher(
        Path(state.settings.retrieval.index_dir),
        _store() if rerank else None,
        ranker=USE_RANKER if ranker is None else ranker,
    )
    try:
        indexes = searcher.indexes(library)
        if ranker and (without := [n for n, ix in indexes.items() if not ix.use_ranker]):
            raise fail(
                f"no learned ranker in the index of {', '.join(without)}: build it with "
                + "; ".join(f"math2 index build --library {n}" for n in without)
            )
        hits = searcher.search(query, library, max(k, 50 if rerank else k))
    except NoIndex as exc:
        raise fail(str(exc)) from exc
    err.print(
        "searched: "
        + "; ".join(
            f"{n} ({len(ix)} declarations; {' + '.join(ix.parts_built())})"
            for n, ix in indexes.items()
        )
        + ("" if library == ALL else "  (every library: --library all)")
        + (
            "; ordered by the learned ranker"
            if any(ix.use_ranker for ix in indexes.values())
            else ""
        )
    )
    if rerank:
        from math2.llm import LLMNotConfigured, UnregisteredModel
        from math2.retrieval.rerank import rerank_with_model

        try:
            res = rerank_with_model(state.settings, searcher.store, rerank, query, hits)
        except (UnregisteredModel, LLMNotConfigured) as exc:
            raise fail(str(exc)) from exc
        note = "reranked" if res.reranked else f"not reranked ({res.error})"
        err.print(f"{note} by {rerank} with {res.template}" + (" (cached)" if res.cached else ""))
        hits = res.hits
    if as_json:
        import json

        out.print_json(json.dumps([h.summary(i).model_dump() for i, h in enumerate(hits[:k], 1)]))
        return
    if not hits:
        err.print("no declaration matches (try other words, or --library all)")
    for i, h in enumerate(hits[:k], 1):
        where = f" [dim]({h.library})[/]" if len(indexes) > 1 else ""
        about = " · ".join(x for x in (h.card.kind, h.card.module) if x)
        lines = [f"{i:>2}. {escape(h.name)}{where}  [dim]{escape(about)}[/]"]
        if h.hit.renamed_from:
            lines.append(f"    [yellow]renamed: {escape(h.hit.renamed_from)} is deprecated, "
                         f"use {escape(h.name)}[/]")  # fmt: skip
        elif h.card.deprecated:  # its successor is not among the indexed declarations
            use = f", use {escape(h.card.successor)}" if h.card.successor else ""
            lines.append(f"    [yellow]deprecated (since {escape(h.card.deprecated)}){use}[/]")
        lines.append("    " + escape(" ".join(h.statement.split())[:120]))
        if h.card.doc:
            lines.append(f"    [dim]{escape(h.card.doc[:120])}[/]")
        if h.informal:  # model text: never shown without who wrote it
            lines.append(f"    [dim]informal: {escape(h.informal.text[:120])} "
                         f"({escape(h.informal.origin)})[/]")  # fmt: skip
        out.print("\n".join(lines), highlight=False)
