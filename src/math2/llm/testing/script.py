"""What the fake model server answers (`fake_server.py`): the script, its rules in order (a
reply, a JSON value, reasoning, or a fault) and the latency model, read from a JSON file; and
the `Reply` a rule makes, sent whole or as OpenAI's server-sent events, in tokens of four
characters."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field


class Rule(BaseModel):
    """One scripted behaviour."""

    model: str | None = None  # regex on the request's model
    system: str | None = None  # regex on the system message
    user: str | None = None  # regex on the last user message
    reply: str | None = None
    expand: bool = False  # `reply` is a template: \1 or \g<name> from the `user` regex's match
    replies: list[str] | None = None
    json_value: Any = Field(None, alias="json")
    reasoning: str | None = None
    status: int | None = None  # 429 or 5xx for the first `fail_times` matching calls
    fail_times: int = 1_000_000
    retry_after: float = 0.0  # seconds, sent with a 429
    malformed: bool = False
    drop: bool = False
    latency_s: float | None = None
    stall_after: int | None = None  # a streamed reply stops after this many tokens (a hang)

    model_config = {"populate_by_name": True}


class Script(BaseModel):
    """Rules in order, a default reply, and the latency model."""

    rules: list[Rule] = Field(default_factory=list)
    default: str = "I do not know."
    models: list[str] = Field(default_factory=lambda: ["fake-model"])
    latency_s: float = 0.0
    per_token_s: float = 0.0
    # what a JSON-schema `response_format` gets: honoured, ignored (prose around the JSON), or
    # rejected with HTTP 400 (as from a server that does not support it)
    json_schema: Literal["honour", "ignore", "reject"] = "honour"


def load_script(path: Path) -> Script:
    """A script from a JSON file."""
    return Script.model_validate_json(Path(path).read_text(encoding="utf-8"))


class Reply(BaseModel):
    """An answer to send: its tokens (4 characters each), reasoning, finish reason, timing."""

    id: str
    model: str | None
    tokens: list[str]
    reasoning: str | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    latency_s: float = 0.0
    per_token_s: float = 0.0
    stall_after: int | None = None

    def _usage(self) -> dict[str, int]:
        n = len([t for t in self.tokens if t])
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": n,
            "total_tokens": self.prompt_tokens + n,
        }

    def whole(self) -> bytes:
        """The non-streamed body."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.tokens)}
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning
        payload = {
            "id": self.id,
            "object": "chat.completion",
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self._usage(),
        }
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")

    def events(self, include_usage: bool) -> Iterator[bytes | None]:
        """The `data:` payloads of the stream (None where it stalls), sleeping per token."""

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            body = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return json.dumps(body, ensure_ascii=False).encode("utf-8")

        yield chunk({"role": "assistant", "content": ""})
        if self.reasoning:
            yield chunk({"reasoning_content": self.reasoning})
        for i, tok in enumerate(self.tokens):
            if self.stall_after is not None and i >= self.stall_after:
                yield None
                return
            time.sleep(self.per_token_s)
            if tok:
                yield chunk({"content": tok})
        yield chunk({}, self.finish_reason)
        if include_usage:
            body = {"id": self.id, "object": "chat.completion.chunk", "model": self.model}
            yield json.dumps({**body, "choices": [], "usage": self._usage()}).encode("utf-8")
