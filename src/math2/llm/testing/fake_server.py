"""A fake OpenAI-compatible server over real HTTP, with scripted answers and injected faults.

    python -m math2.llm.testing.fake_server --script script.json [--port 0] [--port-file F]
        [--log requests.jsonl]

`POST /v1/chat/completions` answers by the first rule of the script that matches the request
(regexes over the model, the system message and the last user message); `GET /v1/models` lists
the script's models; `GET /_log` returns every request received (with its hash), `GET /_counts`
the number of calls per request hash; `GET /health`.

A rule can answer with text (`reply`, or `replies` cycled by call count), a JSON value (`json`,
sent as text), reasoning content, or a fault: `status` 429 (with `Retry-After: retry_after`) or
500 for its first `fail_times` calls, `malformed` (a body that is not JSON), `drop` (the
connection closes with no answer), `stall_after` (a streamed reply stops sending after that many
tokens and holds the connection, as a hung server does). A reply is cut into tokens of four
characters; `max_tokens` is honoured (`finish_reason` "length"); a request with `stream: true` is
answered with server-sent events as OpenAI sends them (a chunk per token, the finish reason, the
usage when `stream_options.include_usage`, then `data: [DONE]`). The latency model is
`latency_s + per_token_s × completion tokens`. A request's JSON-schema `response_format` is
honoured (a `json` answer is sent bare), ignored (the JSON comes wrapped in prose, as from a model
that was not constrained) or rejected with HTTP 400, per the script's `json_schema`. With `--log`,
every request is appended to a file as it arrives, so counts survive a restart of the client under
test (`read_log`, `repeats`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from math2.llm.testing.request_log import (
    SENT_ONLY,
    as_stored,
    read_log,
    received,
    repeats,
    request_hash,
)
from math2.llm.testing.script import Reply, Rule, Script, load_script

# The script and the request log have their own modules; their names are also this module's,
# where tests and benchmarks import them from.
__all__ = [
    "SENT_ONLY",
    "STALL_S",
    "FakeServer",
    "Reply",
    "Rule",
    "Script",
    "as_stored",
    "load_script",
    "main",
    "read_log",
    "received",
    "repeats",
    "request_hash",
]

STALL_S = 3600.0  # how long a stalled stream holds the connection


def _wants_schema(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format")
    return isinstance(fmt, dict) and fmt.get("type") == "json_schema"


class FakeServer:
    """The server; `with FakeServer(script) as srv: srv.base_url …` runs it on a free port."""

    def __init__(self, script: Script, port: int = 0, log_path: Path | None = None):
        self.script = script
        self.log_path = Path(log_path) if log_path else None
        self.requests: list[dict[str, Any]] = []
        self.calls_per_rule: dict[int, int] = {}
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def hashes(self) -> list[str]:
        """The hash of every chat request received, in order."""
        return [r["hash"] for r in self.requests]

    def counts(self) -> dict[str, int]:
        """The number of calls received per request hash."""
        with self._lock:
            return dict(Counter(r["hash"] for r in self.requests))

    def repeats(self) -> dict[str, int]:
        """Request hashes answered more than once (a resumed client should make none)."""
        with self._lock:
            return repeats(list(self.requests))

    def _match(self, body: dict[str, Any]) -> tuple[int, Rule, re.Match[str] | None] | None:
        msgs = body.get("messages") or []
        system = "\n".join(m.get("content", "") for m in msgs if m.get("role") == "system")
        users = [m.get("content", "") for m in msgs if m.get("role") == "user"]
        user = users[-1] if users else ""
        for i, rule in enumerate(self.script.rules):
            if rule.model and not re.search(rule.model, body.get("model", "")):
                continue
            if rule.system and not re.search(rule.system, system, re.S):
                continue
            m = re.search(rule.user, user, re.S) if rule.user else None
            if rule.user and not m:
                continue
            return i, rule, m
        return None

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes | None] | Reply:
        """A fault (status, headers, body bytes or None to drop the connection), or the
        `Reply` to send (whole, or as server-sent events when the request streams)."""
        with self._lock:
            found = self._match(body)
            idx, rule, m = found if found else (-1, Rule(reply=self.script.default), None)
            n = self.calls_per_rule.get(idx, 0)
            self.calls_per_rule[idx] = n + 1
            status = 200
            if rule.drop:
                status = 0
            elif self.script.json_schema == "reject" and _wants_schema(body):
                status = 400
            elif rule.status is not None and n < rule.fail_times:
                status = rule.status
            entry = {
                "hash": request_hash(body),
                "body": body,
                "t": time.time(),
                "rule": idx,
                "status": status,
            }
            self.requests.append(entry)
            if self.log_path:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if status == 0:
            return 0, {}, None
        if status == 400:
            msg = b'{"error": {"message": "response_format json_schema is not supported"}}'
            return 400, {}, msg
        if status != 200:
            headers = {"Retry-After": f"{rule.retry_after:g}"} if status == 429 else {}
            return status, headers, b'{"error": {"message": "injected failure"}}'
        if rule.malformed:
            return 200, {}, b'{"choices": [ {"message": '
        if rule.json_value is not None:
            content = json.dumps(rule.json_value, ensure_ascii=False)
            if self.script.json_schema == "ignore" or not _wants_schema(body):
                content = f"Here is my verdict.\n```json\n{content}\n```\nI hope this helps."
        elif rule.replies:
            content = rule.replies[n % len(rule.replies)]
        elif rule.expand and rule.reply is not None and m is not None:
            content = m.expand(rule.reply)
        else:
            content = rule.reply if rule.reply is not None else self.script.default
        tokens = [content[i : i + 4] for i in range(0, len(content), 4)] or [""]
        finish = "stop"
        budget = body.get("max_tokens")
        if isinstance(budget, int) and 0 < budget < len(tokens):
            tokens, finish = tokens[:budget], "length"  # a real server stops at the budget
        return Reply(
            id=f"fake-{len(self.requests)}",
            model=body.get("model"),
            tokens=tokens,
            reasoning=rule.reasoning,
            finish_reason=finish,
            prompt_tokens=sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4,
            latency_s=rule.latency_s if rule.latency_s is not None else self.script.latency_s,
            per_token_s=self.script.per_token_s,
            stall_after=rule.stall_after,
        )

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = {"data": [{"id": m, "object": "model"} for m in server.script.models]}
                    self._send(200, json.dumps(data).encode())
                elif self.path.startswith("/_log"):
                    with server._lock:
                        data = json.dumps(server.requests, ensure_ascii=False)
                    self._send(200, data.encode())
                elif self.path.startswith("/_counts"):
                    self._send(200, json.dumps(server.counts()).encode())
                elif self.path.startswith("/health"):
                    self._send(200, b'{"status": "ok"}')
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": "not found"}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "body is not JSON"}}')
                    return
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    answer = server.answer(body)
                    if isinstance(answer, Reply):
                        if body.get("stream"):
                            self._stream(answer, body)
                        else:
                            time.sleep(answer.latency_s + answer.per_token_s * len(answer.tokens))
                            self._send(200, answer.whole())
                        return
                finally:
                    with server._lock:
                        server.active -= 1
                status, headers, data = answer
                if data is None:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self._send(status, data, headers)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                """Server-sent events as OpenAI sends them: a chunk per token, the finish
                reason, the usage (with `stream_options.include_usage`), then [DONE]."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                opts = body.get("stream_options") or {}
                try:
                    time.sleep(reply.latency_s)
                    for event in reply.events(bool(opts.get("include_usage"))):
                        if event is None:  # a stall: the server stops sending, holding on
                            time.sleep(STALL_S)
                            break
                        self._chunk(b"data: " + event + b"\n\n")
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client went away (its deadline)

        return Handler


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="fake_server", description=__doc__.splitlines()[0])
    p.add_argument("--script", type=Path, help="a JSON script (default: answer the default)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", type=Path, help="write the port here once listening")
    p.add_argument("--log", type=Path, help="append each request (one JSON a line)")
    args = p.parse_args(argv)
    script = load_script(args.script) if args.script else Script()
    srv = FakeServer(script, args.port, args.log)
    if args.port_file:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(srv.port))
        tmp.replace(args.port_file)
    with contextlib.suppress(KeyboardInterrupt):
        srv.httpd.serve_forever()


if __name__ == "__main__":
    main()
