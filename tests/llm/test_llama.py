"""math2's client against a real model: llama.cpp's llama-server serving SmolLM2-135M."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel

from math2.llm import Endpoint, LLMClient, MemoryCache, structured

pytestmark = pytest.mark.llm


class Verdict(BaseModel):
    consistent: bool
    clause: str


def client(srv) -> LLMClient:
    return LLMClient(Endpoint(base_url=srv.base_url, model=srv.model, timeout_s=120), MemoryCache())


def test_server_lists_its_model(llama_server):
    models = httpx.get(llama_server.base_url + "/models", timeout=10).json()
    assert llama_server.model in [m["id"] for m in models["data"]]


async def test_chat_answers_with_tokens_counted(llama_server):
    c = client(llama_server)
    msgs = [{"role": "user", "content": "Name one prime number."}]
    r = await c.chat(msgs, temperature=0.0, max_tokens=24)
    assert r.content.strip()
    assert r.prompt_tokens > 0 and 0 < r.completion_tokens <= 24
    again = await c.chat(msgs, temperature=0.0, max_tokens=24)
    assert again.cached and again.content == r.content
    await c.aclose()


async def test_json_schema_response_format_is_honoured(llama_server):
    c = client(llama_server)
    msgs = [
        {
            "role": "user",
            "content": "Is `theorem t : 1 + 1 = 2` the statement 'one plus one is two'? "
            "Answer in JSON.",
        }
    ]
    out = await structured(c, msgs, Verdict, retries=0, temperature=0.0, max_tokens=128)
    # the grammar built from the schema makes even a 135M model answer a valid object
    assert out.error is None, out.error
    assert isinstance(out.value, Verdict)
    assert out.responses[0].request["response_format"]["type"] == "json_schema"
    await c.aclose()
