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
        bool, typer.Option(help="Also embed every declaration (resumable, with progress).")
    ] = True,
    encoder: Annotated[
        str | None,
        typer.Option(help="Dense encoder: bge-small or minilm (default: retrieval.encoder)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N declarations.")] = None,
) -> None:
    """Build (or resume) the BM25 + dense + PageRank index of a library's declarations."""
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


def _all_indexes() -> list[tuple[str, Path]]:
    """Every built index under the index folder, by library name."""
    root = Path(state.settings.retrieval.index_dir)
    found = sorted(
        (d.name, d) for d in (root.iterdir() if root.is_dir() else []) if (d / "meta.json").exists()
    )
    if not found:
        raise fail(f"no index under {root}: run `math2 build` or `math2 index build`")
    return found


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for, in words, LaTeX or Lean.")],
    k: Annotated[int, typer.Option("-k", help="How many results.")] = 10,
    library: Annotated[
        str | None, typer.Option(help="Search only this library's index (default: all built).")
    ] = None,
    rerank: Annotated[
        str | None,
        typer.Option(help="Rerank the fused top 50 with this registered model (cached)."),
    ] = None,
) -> None:
    """Search the declarations of every built index (BM25 + dense + informal descriptions,
    fused), or of one library's; says which indexes it searched."""
    from sqlalchemy import select

    from math2.retrieval.index import SearchIndex
    from math2.store import Mention

    targets = [(library, _built_index(library))] if library else _all_indexes()
    hits = []
    searched = []
    for name, folder in targets:
        index = SearchIndex(folder)
        parts = (
            "BM25"
            + (" + phrases" if index.phrase is not None else "")
            + (" + dense" if index.has_dense else "")
            + (" + descriptions" if index.desc is not None else "")
        )
        searched.append(f"{name} ({len(index.ids)} declarations; {parts})")
        hits += [(name, h) for h in index.search(query, max(k, 50 if rerank else k))]
    # Fused scores are reciprocal-rank sums, so they compare across indexes.
    hits = sorted(hits, key=lambda nh: -nh[1].score)
    err.print("searched: " + "; ".join(searched))
    store = _store()
    if rerank:
        from math2.llm import LLMNotConfigured, UnregisteredModel
        from math2.retrieval.rerank import rerank_with_model

        library_of = {h.mention_id: name for name, h in hits}
        try:
            res = rerank_with_model(state.settings, store, rerank, query, [h for _, h in hits])
        except (UnregisteredModel, LLMNotConfigured) as exc:
            raise fail(str(exc)) from exc
        note = "reranked" if res.reranked else f"not reranked ({res.error})"
        err.print(f"{note} by {rerank} with {res.template}" + (" (cached)" if res.cached else ""))
        hits = [(library_of[h.mention_id], h) for h in res.hits]
    hits = hits[:k]
    with store.session() as s:
        ids = [h.mention_id for _, h in hits]
        rows = {m.id: m for m in s.scalars(select(Mention).where(Mention.id.in_(ids)))}
    for i, (name, h) in enumerate(hits, 1):
        m = rows.get(h.mention_id)
        stmt = (m.statement or "")[:120] if m else ""
        where = f" [dim]({name})[/]" if len(targets) > 1 else ""
        out.print(
            f"{i:>2}. {escape(h.name)}{where}  [dim]{h.score:.4f}[/]\n    " + escape(stmt),
            highlight=False,
        )
