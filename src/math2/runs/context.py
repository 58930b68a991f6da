"""What a step sees of its run: the item, its resources, and the attempt log.

Each model call and each Lean check is an attempt, keyed by (run, item, stage, round, sample).
Attempts are written with INSERT … ON CONFLICT DO NOTHING, so a resumed run that replays an item
from the caches (the LLM response cache, the Lean result cache) writes nothing twice.
"""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.llm.client import LLMClient
from math2.llm.structured import structured
from math2.llm.templates import Template
from math2.llm.types import ChatResponse, Structured
from math2.store.aio import AsyncStore
from math2.store.upsert import insert_ignore
from math2.store.work import Attempt
from math2.util.limits import Resource

if TYPE_CHECKING:
    from math2.lean import CheckItem, CheckResult, LeanChecker

T = TypeVar("T", bound=BaseModel)


class ItemContext:
    """Per-item handle: `await ctx.chat(...)`, `await ctx.lean(...)`, `await ctx.attempt(...)`."""

    def __init__(
        self,
        run_id: int,
        item: str,
        astore: AsyncStore,
        resources: dict[str, Resource],
        attempts_before: int = 0,
        services: dict[str, Any] | None = None,
    ):
        self.run_id = run_id
        self.item = item
        self.astore = astore
        self.resources = resources
        # Runtime objects the steps use (clients, checker, index): not part of the spec.
        self.services = services or {}
        self.attempts_before = attempts_before  # how many times this item was started before
        self.stage: str | None = None
        self.calls = 0

    def slot(self, resource: str) -> AbstractAsyncContextManager[Any]:
        """Hold a slot of a named resource (no limit when the run has no such resource)."""
        r = self.resources.get(resource)
        return r.slot() if r is not None else nullcontext()

    async def attempt(
        self,
        *,
        stage: str,
        round: int = 0,
        sample: int = 0,
        model: str | None = None,
        template: Template | None = None,
        request: dict[str, Any] | None = None,
        response: dict[str, Any] | None = None,
        verdict: str | None = None,
        error: str | None = None,
        cached: bool = False,
        duration_s: float = 0.0,
        tokens_in: int = 0,
        tokens_out: int = 0,
    ) -> int:
        """Record an attempt (once per key) and return its id."""
        self.stage = stage
        self.calls += 1
        values = {
            "run_id": self.run_id,
            "item": self.item,
            "stage": stage,
            "round": round,
            "sample": sample,
            "model": model,
            "template_id": template.ref if template else None,
            "template_hash": template.hash if template else None,
            "request": request or {},
            "response": response or {},
            "verdict": verdict,
            "error": error,
            "cached": cached,
            "duration_s": duration_s,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
        }

        run_id, item = self.run_id, self.item  # plain values: the closure may travel (Ray)

        def write(s: Session) -> int:
            new_id = insert_ignore(s, Attempt, values, returning="id")
            if new_id is not None:
                return new_id
            return s.scalar(  # written before (a resumed item replayed from the caches)
                select(Attempt.id).where(
                    Attempt.run_id == run_id,
                    Attempt.item == item,
                    Attempt.stage == stage,
                    Attempt.round == round,
                    Attempt.sample == sample,
                )
            )

        return await self.astore.write(write)

    async def chat(
        self,
        client: LLMClient,
        template: Template,
        variables: dict[str, Any],
        *,
        stage: str,
        round: int = 0,
        sample: int = 0,
        **params: Any,
    ) -> tuple[ChatResponse, int]:
        """A model call from a template, recorded as an attempt: (reply, attempt id)."""
        messages = template.render(**variables)
        started = time.monotonic()
        resp = await client.chat(messages, sample=sample, round=round, **params)
        aid = await self.attempt(
            stage=stage,
            round=round,
            sample=sample,
            model=client.model,
            template=template,
            request=resp.request,
            response=_reply(resp),
            cached=resp.cached,
            # The model's time, not the wait for a concurrency slot (a cached reply: the lookup).
            duration_s=time.monotonic() - started if resp.cached else resp.latency_s,
            tokens_in=resp.prompt_tokens,
            tokens_out=resp.completion_tokens,
        )
        return resp, aid

    async def structured(
        self,
        client: LLMClient,
        template: Template,
        variables: dict[str, Any],
        schema: type[T],
        *,
        stage: str,
        round: int = 0,
        sample: int = 0,
        retries: int = 2,
        **params: Any,
    ) -> tuple[Structured[T], int]:
        """A structured model call, recorded as one attempt with every reply it took.

        The attempt's verdict is `parsed` or `unparseable`; an unparseable reply is a failure
        the caller must treat as such (never as a pass).
        """
        started = time.monotonic()
        out = await structured(
            client,
            template.render(**variables),
            schema,
            sample=sample,
            round=round,
            retries=retries,
            **params,
        )
        last = out.responses[-1] if out.responses else None
        aid = await self.attempt(
            stage=stage,
            round=round,
            sample=sample,
            model=client.model,
            template=template,
            request=last.request if last else {},
            response={
                "replies": [_reply(r) for r in out.responses],
                "value": out.value.model_dump(mode="json") if out.value is not None else None,
                "repairs": out.repairs,
            },
            verdict="parsed" if out.ok else "unparseable",
            error=out.error,
            cached=all(r.cached for r in out.responses),
            duration_s=(
                time.monotonic() - started
                if all(r.cached for r in out.responses)
                else sum(r.latency_s for r in out.responses if not r.cached)
            ),
            tokens_in=sum(r.prompt_tokens for r in out.responses),
            tokens_out=sum(r.completion_tokens for r in out.responses),
        )
        return out, aid

    async def lean(
        self,
        checker: LeanChecker,
        item: CheckItem,
        *,
        stage: str = "compile",
        round: int = 0,
        sample: int = 0,
    ) -> tuple[CheckResult, int]:
        """A Lean check (hygiene first, then the backend), on a `lean` slot, as an attempt."""
        async with self.slot("lean"):
            started = time.monotonic()  # Lean's time, not the wait for a slot
            result = await checker.check(item)
            took = time.monotonic() - started
        ident = checker.identity
        aid = await self.attempt(
            stage=stage,
            round=round,
            sample=sample,
            model=f"lean:{ident.kind if ident is not None else checker.backend.name}",
            request=item.model_dump(mode="json"),
            response=result.model_dump(mode="json"),
            verdict=result.status.value,
            error=None if result.passed else result.reason,
            cached=result.cached,
            duration_s=took,
        )
        return result, aid


def _reply(resp: ChatResponse) -> dict[str, Any]:
    return {
        "key": resp.key,
        "content": resp.content,
        "reasoning": resp.reasoning,
        "finish_reason": resp.finish_reason,
        "latency_s": resp.latency_s,
    }
