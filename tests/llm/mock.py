"""An in-process OpenAI-compatible responder for unit tests of the client (httpx MockTransport).

The real-HTTP fake server for end-to-end tests lives in math2.llm.testing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx


def completion(content: str, reasoning: str | None = None, tokens: tuple[int, int] = (10, 5)):
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }


class Scripted:
    """Answers each POST with the next scripted reply (or a function of the request)."""

    def __init__(self, replies: list[Any] | Callable[[dict], Any], delay_s: float = 0.0):
        self.replies = replies
        self.delay_s = delay_s
        self.requests: list[dict] = []
        self.active = 0
        self.max_active = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            reply = self.replies(body) if callable(self.replies) else self.replies.pop(0)
        finally:
            self.active -= 1
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        if isinstance(reply, str):
            return httpx.Response(200, json=completion(reply))
        return httpx.Response(200, json=reply)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)
