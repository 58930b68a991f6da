"""Structured output: JSON schema, tagged fallback, bounded retry, a clear failure."""

from __future__ import annotations

import json

from pydantic import BaseModel

from math2.llm import Endpoint, LLMClient, MemoryCache, structured
from tests.llm.mock import Scripted

MSG = [{"role": "user", "content": "Judge this pair."}]


class Verdict(BaseModel):
    consistent: bool
    defects: list[str]


def make(script: Scripted, json_schema: bool = True) -> LLMClient:
    ep = Endpoint(base_url="http://m.test/v1", model="judge", json_schema=json_schema)
    return LLMClient(ep, MemoryCache(), transport=script.transport())


async def test_json_schema_response_format():
    s = Scripted(['```json\n{"consistent": true, "defects": []}\n```'])
    out = await structured(make(s), MSG, Verdict)
    assert out.ok and out.value == Verdict(consistent=True, defects=[])
    rf = s.requests[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Verdict"


async def test_tagged_fallback_without_schema_support():
    s = Scripted(['Sure. <json>{"consistent": false, "defects": ["missing precondition"]}</json>'])
    out = await structured(make(s, json_schema=False), MSG, Verdict)
    assert out.ok and out.value.defects == ["missing precondition"]
    assert "response_format" not in s.requests[0]
    assert "<json>" in s.requests[0]["messages"][-1]["content"]


async def test_retry_then_success():
    s = Scripted(["no idea", '{"consistent": true, "defects": []}'])
    out = await structured(make(s), MSG, Verdict, retries=2)
    assert out.ok and len(out.responses) == 2
    # the retry showed the model its unreadable reply and the reason
    second = s.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "no idea"}
    assert "could not be read" in second[-1]["content"]


async def test_malformed_is_a_clear_failure_never_a_value():
    s = Scripted(["{broken", '{"consistent": "maybe"}', json.dumps({"defects": []})])
    out = await structured(make(s), MSG, Verdict, retries=2)
    assert not out.ok and out.value is None
    assert "no valid Verdict after 3 replies" in out.error
    assert len(s.requests) == 3
