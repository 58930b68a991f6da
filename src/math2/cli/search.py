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
        bool,
        typer.Option(
            help="Also embed every declaration (opt-in: resumable, with progress; about 16 "
            "minutes for all of Mathlib on two cores, and measured not to lift quality)."
        ),
    ] = False,
    encoder: Annotated[
        str | None,
        typer.Option(help="Dense encoder: bge-small or minilm (default: retrieval.encoder)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N declarations.")] = None,
) -> None:
    """Build (or resume) the BM25 (+ search aids, + dense when asked) index of a library's
    declarations."""
    from math2.retrieval.aids import mathlib_checkout
    from math2.retrieval.encoder import ENCODERS, EncoderUnavailable
    from math2.retrieval.index import build_index

    encoder = encoder or state.settings.retrieval.encoder
    if encoder not in ENCODERS:
        raise fail(f"unknown encoder {encoder!r}: one of {', '.join(ENCODERS)}")
    folder = Path(state.settings.retrieval.index_dir) / library
    try:
        meta = build_index(
            _store(), folder, library, dense=dense, limit=limit,
            progress=lambda m: err.print(m), encoder=encoder,
            mathlib_dir=mathlib_checkout(state.settings),
        )  # fmt: skip
    except (LookupError, EncoderUnavailable) as exc:
        raise fail(str(exc)) from exc
    dense_part = meta.get("dense")
    out.print(
        f"index of {meta['count']} declarations at {folder}"
        + (f"; dense part: {dense_part['encoder']}" if dense_part else "; no dense part")
        + (", HNSW graph" if dense_part and dense_part.get("ann") else "")
    )


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
) -> None:
    """Search the declarations of one library (default: Mathlib, or the library of the Lean
    project in this folder) or of every built one (`--library all`), and say what it searched.
    Indexes are memory-mapped: the store is opened only to rerank."""
    from math2.retrieval.index import SearchIndex
    from math2.retrieval.scope import ALL, LibraryHit, built_libraries, default_library
    from math2.retrieval.scope import search_libraries as merge

    root = Path(state.settings.retrieval.index_dir)
    built = built_libraries(root)
    if not built:
        raise fail(f"no index under {root}: run `math2 build` or `math2 index build`")
    first = default_library(built, Path.cwd())
    if library and library != ALL and library not in built:
        raise fail(
            f"no index for {library!r} under {root} (built: {', '.join(built)}): "
            f"run `math2 index build --library {library}`"
        )
    if library is None and first is None:
        raise fail(f"several indexes under {root} and none is mathlib: name one with --library")
    names = list(built) if library == ALL else [library or first]
    try:
        indexes = {n: SearchIndex(built[n]) for n in names}  # type: ignore[index]
    except FileNotFoundError as exc:
        raise fail(str(exc)) from exc
    pool = max(k, 50 if rerank else k)
    if len(indexes) == 1:
        ((name, index),) = indexes.items()
        hits = [LibraryHit(name, h, h.score) for h in index.search(query, pool)]
    else:
        hits = merge(indexes, query, pool, first=first)
    err.print(
        "searched: "
        + "; ".join(
            f"{n} ({len(ix)} declarations; {' + '.join(ix.parts_built())})"
            for n, ix in indexes.items()
        )
        + ("" if library == ALL else "  (every library: --library all)")
    )
    if rerank:
        from math2.llm import LLMNotConfigured, UnregisteredModel
        from math2.retrieval.rerank import rerank_with_model

        by_id = {h.hit.mention_id: h for h in hits}
        try:
            res = rerank_with_model(state.settings, _store(), rerank, query, [h.hit for h in hits])
        except (UnregisteredModel, LLMNotConfigured) as exc:
            raise fail(str(exc)) from exc
        note = "reranked" if res.reranked else f"not reranked ({res.error})"
        err.print(f"{note} by {rerank} with {res.template}" + (" (cached)" if res.cached else ""))
        hits = [by_id[h.mention_id] for h in res.hits]
    if not hits:
        err.print("no declaration matches (try other words, or --library all)")
    for i, h in enumerate(hits[:k], 1):
        stmt = indexes[h.library].snippet(h.hit.position)[:120]
        where = f" [dim]({h.library})[/]" if len(indexes) > 1 else ""
        out.print(
            f"{i:>2}. {escape(h.hit.name)}{where}  [dim]{h.score:.4f}[/]\n    " + escape(stmt),
            highlight=False,
        )
