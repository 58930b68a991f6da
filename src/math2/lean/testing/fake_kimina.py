"""A fake Kimina Lean Server: `POST /api/check` over real HTTP, answered by the fake REPL logic.

`serve(port=0)` starts it on 127.0.0.1 in a thread and returns (server, url).
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from math2.lean.testing.fake_repl import Fake


class _Handler(BaseHTTPRequestHandler):
    server_version = "fake-kimina/1"
    api_key: str | None = None

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        return

    def _json(self, code: int, obj: dict[str, object]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            self._json(200, {"status": "ok"})
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/api/check", "/check"):
            self._json(404, {"detail": "Not Found"})
            return
        if self.api_key and self.headers.get("Authorization") != f"Bearer {self.api_key}":
            self._json(401, {"detail": "Invalid API key"})
            return
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            snippets = req["snippets"]
            timeout = float(req.get("timeout", 30))
        except (ValueError, KeyError) as exc:
            self._json(422, {"detail": f"invalid request: {exc}"})
            return
        results = []
        for snip in snippets:
            t0 = time.monotonic()
            code = snip["code"]
            if re.search(r"--\s*fake:\s*(hang|crash|oom)", code):
                time.sleep(min(timeout, 2.0))
                results.append(
                    {
                        "id": snip["id"],
                        "time": timeout,
                        "error": f"Lean REPL command timed out in {timeout:g} seconds",
                    }
                )
                continue
            fake = Fake(
                argparse.Namespace(
                    header_delay=0.0, check_delay=0.0, wording="new", kind="fake-kimina"
                )
            )
            # Like the server: the header (the leading `import` lines) is split off and loaded
            # on its own; positions are those of the rest.
            lines = code.split("\n")
            cut = 0
            while cut < len(lines) and (lines[cut].startswith("import ") or not lines[cut].strip()):
                cut += 1
            response = fake.command({"cmd": "\n".join(lines[cut:])})
            results.append({"id": snip["id"], "time": time.monotonic() - t0, "response": response})
        self._json(200, {"results": results})


def serve(port: int = 0, api_key: str | None = None) -> tuple[ThreadingHTTPServer, str]:
    """Start the fake server in a daemon thread; return it and its base URL."""
    handler = type("Handler", (_Handler,), {"api_key": api_key})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
