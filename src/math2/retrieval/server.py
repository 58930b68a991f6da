"""A small HTTP endpoint over a search index: `GET /search?q=…&k=10` → JSON hits.

It binds to 127.0.0.1 by default; one index, loaded once, answers every request.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from math2.retrieval.index import SearchIndex

MAX_K = 100


def make_server(index: SearchIndex, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving) that answers `/search` and `/health` from `index`."""
    lock = threading.Lock()  # the encoder and bm25s are not meant for concurrent calls

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            return

        def _send(self, code: int, obj: object) -> None:
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/health":
                self._send(
                    200, {"status": "ok", "documents": len(index.ids), "dense": index.has_dense}
                )
                return
            if url.path != "/search":
                self._send(404, {"error": "not found"})
                return
            params = parse_qs(url.query)
            query = (params.get("q") or [""])[0].strip()
            try:
                k = int((params.get("k") or ["10"])[0])
            except ValueError:
                k = -1
            if not query or not 1 <= k <= MAX_K:
                self._send(400, {"error": f"give q (non-empty) and k in 1..{MAX_K}"})
                return
            with lock:
                hits = index.search(query, k)
            self._send(200, {"query": query, "hits": [h.model_dump() for h in hits]})

    return ThreadingHTTPServer((host, port), Handler)
