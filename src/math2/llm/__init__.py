"""One client for OpenAI-compatible endpoints, prompts as versioned templates, the model register.

    from math2.llm import Endpoint, LLMClient, StoreCache, structured, load_template

    client = LLMClient(Endpoint(base_url="http://127.0.0.1:8000/v1", model="m"), StoreCache(astore))
    t = load_template("formalize/generate")
    reply = await client.chat(t.render(statement=s), sample=0, temperature=0.7)
    verdict = await structured(client, t.render(...), JudgeVerdict, retries=2)

Roles normally call models through `math2.runs.ItemContext.chat`, which also records the attempt
(template id and hash, request, reply, timings) and holds the model's slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from math2.llm.cache import MemoryCache, ResponseCache, StoreCache
from math2.llm.client import PARAMS, LLMClient
from math2.llm.register import add_model, list_models, require_model
from math2.llm.structured import extract_json, parse_reply, schema_format, structured
from math2.llm.templates import Template, load_template, load_template_file
from math2.llm.types import (
    ChatResponse,
    Endpoint,
    EndpointDown,
    LLMError,
    LLMNotConfigured,
    Structured,
    UnregisteredModel,
    Usage,
    cache_key,
)

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.store.aio import AsyncStore


def endpoint_for(settings: Settings, model: str) -> Endpoint:
    """The endpoint serving `model`: `llm.endpoints.<model>` if configured, else `llm.base_url`."""
    llm = settings.llm
    specific = llm.endpoints.get(model)
    base_url = (
        (specific.base_url or (specific.base_urls[0] if specific.base_urls else None))
        if specific
        else None
    ) or llm.base_url
    if not base_url:
        raise LLMNotConfigured(
            f'no endpoint for model {model!r}: set llm.base_url (or [llm.endpoints."{model}"] '
            "base_url) in math2.toml, or MATH2_LLM__BASE_URL=http://host:port/v1 — any "
            "OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp's llama-server, an API)"
        )
    return Endpoint(
        base_url=base_url,
        model=(specific.served_name if specific and specific.served_name else model),
        api_key=(specific.api_key if specific and specific.api_key else llm.api_key),
        json_schema=specific.json_schema if specific else llm.json_schema,
        concurrency=(
            specific.concurrency if specific and specific.concurrency else llm.concurrency
        ),
        timeout_s=llm.timeout_s,
        timeout_floor_s=llm.timeout_floor_s,
        stream=llm.stream,
        max_retries=llm.max_retries,
        down_after=llm.down_after,
    )


def make_client(settings: Settings, model: str, astore: AsyncStore | None = None) -> LLMClient:
    """A client for a model, with the store's response cache when a store is given."""
    cache = StoreCache(astore) if astore is not None else None
    specific = settings.llm.endpoints.get(model)
    if specific and specific.base_urls:  # one model on several servers (math2.llm.endpoints)
        from math2.llm.endpoints import balanced_client

        return balanced_client(endpoint_for(settings, model), specific.base_urls, cache)
    return LLMClient(endpoint_for(settings, model), cache)


__all__ = [
    "PARAMS",
    "ChatResponse",
    "Endpoint",
    "EndpointDown",
    "LLMClient",
    "LLMError",
    "LLMNotConfigured",
    "MemoryCache",
    "ResponseCache",
    "StoreCache",
    "Structured",
    "Template",
    "UnregisteredModel",
    "Usage",
    "add_model",
    "cache_key",
    "endpoint_for",
    "extract_json",
    "list_models",
    "load_template",
    "load_template_file",
    "make_client",
    "parse_reply",
    "require_model",
    "schema_format",
    "structured",
]
