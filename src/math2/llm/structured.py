"""Structured output: a pydantic schema in, a validated value (or a clear failure) out.

Where the endpoint honours JSON-schema `response_format`, the schema goes there; otherwise the
prompt asks for the JSON between `<json>` and `</json>` tags. A reply that does not parse or
validate is answered once more with a repair prompt that quotes the parser's error, at a higher
temperature (a greedy model repeats itself: repair n asks at the caller's temperature + 0.4 × n,
at most 1.0), at most `retries` times; after that the result is
a failure with the reason, never a value. `repairs` counts the repair requests sent.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from math2.llm.client import LLMClient
from math2.llm.types import Structured

T = TypeVar("T", bound=BaseModel)

_TAG = re.compile(r"<json>(.*?)</json>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def round_temperature(base: float, attempt: int) -> float:
    """The temperature of repair `attempt` (1, 2, …): raised, so the same answer is unlikely."""
    return round(min(1.0, max(base, 0.0) + 0.4 * attempt), 2)


def schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The `response_format` for a pydantic schema."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
    }


def tag_instruction(schema: type[BaseModel]) -> str:
    """What the prompt says when the endpoint cannot enforce a schema."""
    return (
        "\n\nAnswer with one JSON object that follows this JSON schema, between <json> and "
        "</json>, and nothing else after it:\n"
        + json.dumps(schema.model_json_schema(), ensure_ascii=False)
    )


def extract_json(text: str) -> Any:
    """The JSON value in a reply: inside <json> tags, a ``` fence, or the outermost braces."""
    candidates: list[str] = []
    if m := _TAG.search(text):
        candidates.append(m.group(1))
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    candidates.append(text)
    last: Exception | None = None
    for c in candidates:
        try:
            return json.loads(c.strip())
        except ValueError as exc:
            last = exc
    raise ValueError(f"no JSON object in the reply ({last})")


def parse_reply(text: str, schema: type[T]) -> T:
    """Validate a reply against the schema; ValueError with the reason when it does not fit."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        errors = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(f"the JSON does not fit {schema.__name__}: {errors}") from exc


async def structured(
    client: LLMClient,
    messages: list[dict[str, Any]],
    schema: type[T],
    *,
    sample: int = 0,
    round: int | None = None,
    retries: int = 2,
    **params: Any,
) -> Structured[T]:
    """Ask for a `schema` value; retry with the parse error at most `retries` times."""
    msgs = [dict(m) for m in messages]
    if client.endpoint.json_schema:
        params = {**params, "response_format": schema_format(schema)}
    else:
        msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"] + tag_instruction(schema)}
    out: Structured[T] = Structured[schema]()  # type: ignore[valid-type]
    error = ""
    base = params.get("temperature") or 0.0  # read once: each repair is base + 0.4 × its number
    for attempt in range(retries + 1):
        if attempt:
            out.repairs += 1
            params = {**params, "temperature": round_temperature(base, attempt)}
        resp = await client.chat(msgs, sample=sample, round=round, **params)
        out.responses.append(resp)
        try:
            out.value = parse_reply(resp.content, schema)
            return out
        except ValueError as exc:
            error = str(exc)
        msgs = [
            *msgs,
            {"role": "assistant", "content": resp.content},
            {
                "role": "user",
                "content": f"Your reply could not be read: {error}. Answer again with only the "
                "JSON object the schema describes.",
            },
        ]
    out.error = f"no valid {schema.__name__} after {retries + 1} replies: {error}"
    return out
