"""A small HTTP endpoint over a library's search index: `GET /search?q=…&k=10` → JSON hits
(`GET /health` says what is loaded). `math2 index serve` runs it on 127.0.0.1 with uvicorn;
every request goes through `Searcher.search`, the search `math2 search` and the web run.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Query

from math2.retrieval.searcher import NoIndex, Searcher

MAX_K = 100


def make_app(searcher: Searcher, library: str | None = None) -> FastAPI:
    """The endpoint over `library`'s index (None: the default library)."""
    app = FastAPI(title="math2 search", docs_url=None, redoc_url=None, openapi_url=None)
    # fail at start, not at the first request, when there is no index to serve
    [name] = searcher.scope(library)

    @app.get("/health")
    def health() -> dict[str, object]:
        index = searcher.index(name)
        return {"status": "ok", "library": name, "documents": len(index), "dense": index.has_dense}

    @app.get("/search")
    def search(q: str = Query("", max_length=500), k: int = 10) -> dict[str, object]:
        if not q.strip() or not 1 <= k <= MAX_K:
            raise HTTPException(400, f"give q (non-empty) and k in 1..{MAX_K}")
        try:
            hits = searcher.search(q.strip(), name, k)
        except NoIndex as exc:
            raise HTTPException(503, str(exc)) from exc
        return {
            "query": q.strip(),
            "library": name,
            "hits": [h.summary(i).model_dump() for i, h in enumerate(hits, 1)],
        }

    return app
