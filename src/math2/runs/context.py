"""What a step sees of its run: the item, its resources, its services and the attempt log.

Each model call and each Lean check is an attempt, keyed by (run, item, stage, round, sample).
Attempts are written with INSERT … ON CONFLICT DO NOTHING, so a resumed run that replays an item
from the caches (the LLM response cache, the Lean result cache) writes nothing twice.

A step's services are typed: `ItemContext[S]` carries the job's `RunServices` subclass
(`math2.services.RoleServices` for the roles), never a bag of names.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.llm.client import LLMClient
from math2.llm.structured import structured
from math2.llm.templates import Template
from math2.llm.types import ChatResponse, EndpointDown, LLMError, Structured
from math2.runs.identity import Provenance
from math2.store.db import Store
from math2.store.upsert import insert_ignore
from math2.store.work import Attempt
from math2.util.limits import Resource

if TYPE_CHECKING:
    from math2.lean import CheckItem, CheckResult, LeanChecker

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


class RunStore(Protocol):
    """The store as a run's steps use it: reads on reader threads, writes through the run's one
    writer (`math2.store.aio.AsyncStore` here, `ray_actors.RemoteStore` in a Ray worker)."""

    @property
    def store(self) -> Store: ...

    async def write(self, fn: Callable[[Session], R]) -> R: ...

    def write_sync(self, fn: Callable[[Session], R]) -> R: ...

    async def read(self, fn: Callable[[Session], R]) -> R: ...


class RunServices:
    """What a run's steps use beside the store — clients, a checker, an index —, as a job's own
    subclass with typed fields (`math2.services.RoleServices` for the roles; this base, with
    nothing, for a job that needs nothing). The executors ask it three things: what the results
    come from (`provenance`: the Lean and the models, part of the run's identity), how many model
    calls were sent again (`call_counts`, for the progress display), and to close."""

    async def provenance(self) -> Provenance:
        return Provenance()

    def model_clients(self) -> list[LLMClient]:
        """The model clients among its fields (one each, a dict of them too)."""
        found: dict[int, LLMClient] = {}
        for value in vars(self).values():
            for v in value.values() if isinstance(value, dict) else [value]:
                if isinstance(v, LLMClient):
                    found.setdefault(id(v), v)
        return list(found.values())

    def call_counts(self) -> tuple[int, int]:
        """(retries, timeouts) of the model calls so far, over its clients."""
        usages = [c.usage for c in self.model_clients()]
        return sum(u.retries for u in usages), sum(u.timeouts for u in usages)

    async def aclose(self) -> None:
        return None


S = TypeVar("S", bound=RunServices)
CALL_FAILED = "call_failed"  # an attempt's verdict: the call brought no reply (see its tries)


# Seconds spent in each stage's calls and checks (not cached, not waiting for a slot), per run
# executed in this process: the progress display's per-stage busy share.
STAGE_SECONDS: dict[int, dict[str, float]] = {}


def stage_share(run_id: int) -> dict[str, float]:
    """Each stage's share (0..1) of the time the run's items spent in calls and checks."""
    secs = STAGE_SECONDS.get(run_id) or {}
    total = sum(secs.values())
    return {k: v / total for k, v in sorted(secs.items())} if total > 0 else {}


class ItemContext(Generic[S]):
    """Per-item handle: `await ctx.chat(...)`, `await ctx.lean(...)`, `await ctx.attempt(...)`;
    `ctx.services` the job's typed services (`ItemContext[RoleServices]` in a role's step)."""

    def __init__(
        self,
        run_id: int,
        item: str,
        astore: RunStore,
        resources: dict[str, Resource],
        services: S,
        attempts_before: int = 0,
        segment_id: int | None = None,
    ):
        self.run_id = run_id
        self.item = item
        self.astore = astore
        self.resources = resources
        # Runtime objects the steps use (clients, checker, index): not part of the spec.
        self.services = services
        self.attempts_before = attempts_before  # how many times this item was started before
        self.segment_id = segment_id  # this drive of the run (a resume is another segment)
        self.stage: str | None = None
        self.calls = 0
        # A model endpoint that is down (the client's breaker): the run stops and this item
        # stays pending, even when the step caught the error and carried on.
        self.endpoint_down: EndpointDown | None = None

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
        if not cached and duration_s > 0:
            clock = STAGE_SECONDS.setdefault(self.run_id, {})
            clock[stage] = clock.get(stage, 0.0) + duration_s
        response = response or {}
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
            new_id: int | None = insert_ignore(s, Attempt, values, returning="id")
            if new_id is not None:
                return new_id
            row = s.scalars(  # written before (a resumed item replayed from the caches)
                select(Attempt).where(
                    Attempt.run_id == run_id,
                    Attempt.item == item,
                    Attempt.stage == stage,
                    Attempt.round == round,
                    Attempt.sample == sample,
                )
            ).one()
            if row.verdict == CALL_FAILED:
                # a call that failed for good (the endpoint did not answer) and was made again
                # when the item was retried: the new outcome replaces it, the old tries kept
                earlier = list((row.response or {}).get("failed_tries") or [])
                for k, v in values.items():
                    if k not in ("run_id", "item", "stage", "round", "sample"):
                        setattr(row, k, v)
                row.response = {
                    **(response or {}),
                    "failed_tries": earlier + list((response or {}).get("failed_tries") or []),
                }
            return row.id

        return await self.astore.write(write)

    async def _failed_call(
        self,
        exc: LLMError,
        client: LLMClient,
        template: Template,
        request: dict[str, Any],
        *,
        stage: str,
        round: int,
        sample: int,
    ) -> int:
        """Record a call that brought no reply (every try failed, or the endpoint refused it)."""
        return await self.attempt(
            stage=stage,
            round=round,
            sample=sample,
            model=client.model,
            template=template,
            request=request,
            response={"failed_tries": [t.model_dump() for t in exc.tries]},
            verdict=CALL_FAILED,
            error=str(exc),
            duration_s=sum(t.duration_s for t in exc.tries),
        )

    async def _call_failed(
        self,
        exc: LLMError,
        client: LLMClient,
        template: Template,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        stage: str,
        round: int,
        sample: int,
    ) -> None:
        """A call that raised: an attempt with its tries (none for one the client's breaker
        refused without trying); an endpoint down is kept for the engine to stop the run."""
        if isinstance(exc, EndpointDown):
            self.endpoint_down = self.endpoint_down or exc
            if not exc.tries:
                return
        _, body = client.request_for(messages, sample, round, **params)
        await self._failed_call(
            exc, client, template, body, stage=stage, round=round, sample=sample
        )

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
        try:
            resp = await client.chat(messages, sample=sample, round=round, **params)
        except LLMError as exc:
            await self._call_failed(exc, client, template, messages, params, stage, round, sample)
            raise
        aid = await self.attempt(
            stage=stage,
            round=round,
            sample=sample,
            model=client.model,
            template=template,
            request=resp.request,
            response={**_reply(resp), **_waits([resp], time.monotonic() - started)},
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
        messages = template.render(**variables)
        try:
            out = await structured(
                client, messages, schema, sample=sample, round=round, retries=retries, **params
            )
        except LLMError as exc:
            await self._call_failed(exc, client, template, messages, params, stage, round, sample)
            raise
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
                **_waits(out.responses, time.monotonic() - started),
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


def _waits(replies: list[ChatResponse], wall_s: float) -> dict[str, Any]:
    """What an attempt keeps beside its replies: the time it queued for a slot or backed off
    (wall time less the model's, failed tries included), the tries that failed before a reply."""
    fresh = [r for r in replies if not r.cached]
    model_s = sum(r.latency_s + sum(t.duration_s for t in r.failed_tries) for r in fresh)
    out: dict[str, Any] = {
        "queue_s": max(0.0, wall_s - model_s) if fresh else 0.0,
        "finish_reasons": [r.finish_reason for r in replies],
    }
    tries = [t.model_dump() for r in fresh for t in r.failed_tries]
    if tries:
        out["failed_tries"] = tries
    return out
