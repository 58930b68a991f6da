"""Streamed replies (server-sent events) and the deadlines derived from an endpoint's speed.

A streamed reply is read chunk by chunk, so a client deadline keeps what the model generated
(the reply ends with `finish_reason = "timeout"`) instead of losing it and sending the call again.
The deadline after the first token is derived from the call's token budget and the speed the
endpoint showed on earlier calls (`SpeedModel`), between a floor and a cap.

The stream is cut into lines at the event stream's own line ends only (`\n`, `\r\n`, `\r`:
`sse_lines`), never at the other characters Python's `splitlines` takes for line breaks
(U+2028, U+2029, U+0085, form feed, …): a server writes those raw inside a chunk's JSON when
the model's reply holds them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

TIMEOUT = "timeout"  # finish_reason of a reply cut off by the client's deadline

_EOL = re.compile(r"\r\n|\n|\r")  # the line ends of a server-sent event stream


async def sse_lines(text: AsyncIterable[str]) -> AsyncIterator[str]:
    """The lines of a server-sent event stream read as decoded text pieces, split at `\n`,
    `\r\n` or `\r` only (a `\r` at the end of a piece waits: it may open a `\r\n`)."""
    rest = ""
    async for piece in text:
        buf = rest + piece
        held = buf.endswith("\r")
        parts = _EOL.split(buf[:-1] if held else buf)
        rest = parts.pop() + ("\r" if held else "")
        for line in parts:
            yield line
    if rest:  # the last line, without a line end (or with a lone `\r`)
        yield rest.removesuffix("\r")


@dataclass
class SpeedModel:
    """The endpoint's measured decoding speed (tokens/s per call), an exponential average.

    `deadline(max_tokens)` is how long a call may generate after its first token:
    `margin × max_tokens / speed + slack_s`, at least `floor_s`, at most `cap_s`; the cap while
    nothing has been measured or the call has no budget.
    """

    floor_s: float = 30.0
    cap_s: float = 300.0
    margin: float = 2.0
    slack_s: float = 0.0
    alpha: float = 0.3
    tokens_per_s: float | None = None
    observed: int = 0

    def observe(self, tokens: int, seconds: float) -> None:
        """Fold in one call's decoding: `tokens` generated in `seconds` after the first."""
        if tokens < 4 or seconds <= 0:
            return  # too short to say anything about speed
        tps = tokens / seconds
        prev = self.tokens_per_s
        self.tokens_per_s = tps if prev is None else prev + self.alpha * (tps - prev)
        self.observed += 1

    def deadline(self, max_tokens: int | None) -> float:
        """Seconds a call with this budget may generate after its first token."""
        if not max_tokens or not self.tokens_per_s:
            return self.cap_s
        want = self.margin * max_tokens / self.tokens_per_s + self.slack_s
        return max(self.floor_s, min(self.cap_s, want))


@dataclass
class StreamState:
    """What has arrived of one streamed reply."""

    started: float = field(default_factory=time.monotonic)
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    chunks: int = 0  # chunks that carried text (≈ tokens: servers send one token a chunk)
    first_at: float | None = None
    last_at: float | None = None
    done: bool = False  # `data: [DONE]` seen

    def feed(self, line: str) -> bool:
        """Take one line of the event stream; True when it brought the first generated text.

        Raises ValueError on a chunk that is not JSON or carries an error object.
        """
        if not line.startswith("data:"):
            return False  # blank separators, comments, `event:` lines
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return False
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            raise ValueError(f"stream chunk is {type(chunk).__name__}, not an object")
        if chunk.get("error"):
            raise ValueError(f"the server reported an error mid-stream: {chunk['error']}")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        first = False
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text = delta.get("content")
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if text:
                self.content.append(str(text))
            if thought:
                self.reasoning.append(str(thought))
            if text or thought:
                now = time.monotonic()
                self.chunks += 1
                if self.first_at is None:
                    self.first_at, first = now, True
                self.last_at = now
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return first

    def decoding(self) -> tuple[int, float]:
        """(tokens after the first, seconds they took): what `SpeedModel.observe` takes."""
        if self.first_at is None or self.last_at is None:
            return 0, 0.0
        tokens = int(self.usage.get("completion_tokens") or self.chunks)
        return max(0, tokens - 1), self.last_at - self.first_at

    def message(self) -> dict[str, Any]:
        """The reply as a non-streamed completion body (so one parser reads both)."""
        msg: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.reasoning:
            msg["reasoning_content"] = "".join(self.reasoning)
        usage = dict(self.usage)
        usage.setdefault("completion_tokens", self.chunks)
        return {
            "choices": [{"index": 0, "message": msg, "finish_reason": self.finish_reason}],
            "usage": usage,
        }
