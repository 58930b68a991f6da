"""Typed requests, responses and errors of the LLM client."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from math2.errors import Math2Error

T = TypeVar("T", bound=BaseModel)


class FailedTry(BaseModel):
    """One try of a call that brought no reply: refused connection, timeout, 5xx, bad body."""

    kind: str  # "connect" | "timeout" | "http" | "malformed" | "refused"
    error: str
    duration_s: float = 0.0
    status: int | None = None


class LLMError(Math2Error):
    """A model call failed for good (after the retries), or the endpoint refused it."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        tries: list[FailedTry] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.tries = tries or []  # every try, each with its error


class EndpointDown(LLMError):
    """An endpoint failed to connect on a run of consecutive calls: the client stops calling it.

    Raised (instead of trying again) for every later call to that endpoint in the process. A run
    that meets it stops early, leaving the items it had not finished pending for a resume; the
    message names the endpoint and how many calls in a row failed.
    """

    def __init__(self, message: str, *, base_url: str, consecutive: int):
        super().__init__(message, retryable=False)
        self.base_url = base_url
        self.consecutive = consecutive

    def with_tries(self, tries: list[FailedTry]) -> EndpointDown:
        """This error, carrying the failed tries of the call that met it (none when refused at
        once)."""
        self.tries = list(tries)
        return self


class LLMNotConfigured(Math2Error):
    """No endpoint is configured for the model a role asked for."""


class UnregisteredModel(Math2Error):
    """Rule X08: only a model in the register may write text for math2."""


class Endpoint(BaseModel):
    """An OpenAI-compatible endpoint serving one model (vLLM, SGLang, Ollama, llama.cpp, APIs)."""

    base_url: str
    model: str  # the name the server knows the model by
    api_key: str | None = None
    json_schema: bool = True  # honours response_format {"type": "json_schema", ...}
    concurrency: int = 8
    timeout_s: float = 300.0  # the cap: the longest wait for a first token, or for generation
    timeout_floor_s: float = 30.0  # the least generation time a budget-derived deadline allows
    stream: bool = True  # ask for server-sent events (a timeout keeps what was generated)
    max_retries: int = 5
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    # Calls in a row that could not connect on any try before the client stops calling the
    # endpoint: every later call raises `EndpointDown` at once (0: never). A reply resets it.
    down_after: int = Field(3, ge=0)


class Usage(BaseModel):
    """Token and call accounting."""

    calls: int = 0
    cached_calls: int = 0
    retries: int = 0
    failures: int = 0
    timeouts: int = 0  # tries that timed out or lost the connection, and replies cut by a deadline
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        """Accumulate `other` into this one."""
        for f in type(self).model_fields:
            setattr(self, f, getattr(self, f) + getattr(other, f))


class ChatResponse(BaseModel):
    """One reply: text, reasoning (where the server gives it), tokens, timings, provenance."""

    key: str  # the cache key: model + parameters + messages + sample index
    model: str
    content: str
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    request: dict[str, Any] = Field(default_factory=dict)
    # tries of this call that failed before this reply came (connection refused, timeout, 5xx)
    failed_tries: list[FailedTry] = Field(default_factory=list)


class Structured(BaseModel, Generic[T]):
    """A structured reply: `value` when it parsed and validated, else `error` (never both)."""

    value: T | None = None
    error: str | None = None
    responses: list[ChatResponse] = Field(default_factory=list)
    repairs: int = 0  # repair requests sent after an unreadable reply

    @property
    def ok(self) -> bool:
        """Whether the reply parsed and validated."""
        return self.value is not None and self.error is None


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, Unicode kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(
    model: str,
    params: dict[str, Any],
    messages: list[dict[str, Any]],
    sample: int,
    round: int | None = None,
) -> str:
    """The response cache key: everything that can change the answer, the sample index and,
    for a refinement loop, the round (round 2 is never answered with round 1's reply)."""
    payload: dict[str, Any] = {
        "model": model,
        "params": params,
        "messages": messages,
        "sample": sample,
    }
    if round is not None:
        payload["round"] = round
    return hashlib.sha256(canonical(payload).encode("utf-8")).hexdigest()
