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


async def test_repair_temperature_is_base_plus_0_4_per_repair():
    # Through the fake server: the temperature each reply was asked at (issue 34 §6: from a
    # base of 0.0 the repairs ask 0.4 then 0.8 — it compounded to 1.0 before).
    from math2.llm.testing import FakeServer, Rule, Script

    def temps(srv) -> list[float]:
        return [r["body"]["temperature"] for r in srv.requests]

    for base, want in [(0.0, [0.0, 0.4, 0.8]), (0.1, [0.1, 0.5, 0.9]), (0.5, [0.5, 0.9, 1.0])]:
        with FakeServer(Script(rules=[Rule(reply="not json")])) as srv:
            ep = Endpoint(base_url=srv.base_url, model="judge", max_retries=0)
            async with LLMClient(ep, MemoryCache()) as c:
                out = await structured(c, MSG, Verdict, retries=2, temperature=base)
            assert not out.ok and out.repairs == 2
            assert temps(srv) == want, (base, temps(srv))
