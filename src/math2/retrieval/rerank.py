"""Reranking of fused search hits by the configured model (listwise, cached like every call).

    reranker = Reranker(make_client(settings, model, astore))   # a registered model
    res = await reranker.rerank(query, hits)      # hits of `math2.retrieval.search`

The top `top` hits (50 by default) are shown to the model with their statements under the
template `retrieval/rerank`; it answers with their numbers, best first (structured output, at most
one retry). The ranked candidates come first, then the candidates it left out in fused order,
then the hits below `top`. An unreadable answer, or a model that cannot be reached, leaves the
fused order as it was and says so in `RerankResult.error`: reranking never loses a hit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from math2.llm import LLMClient, LLMError, load_template, structured

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.store import Store

TEMPLATE = "retrieval/rerank"
STATEMENT_CHARS = 300


class Ranking(BaseModel):
    """The model's answer: candidate numbers, best match first."""

    ranking: list[int] = Field(description="candidate numbers, the best match first")


class RerankResult(BaseModel):
    """Hits in their new order, and what happened."""

    hits: list[Any]  # the hits given, reordered
    reranked: bool
    error: str | None = None
    template: str = ""  # id@version and hash of the template used
    cached: bool = False


class Reranker:
    """Listwise reranking with one client (its cache makes a repeated query free)."""

    def __init__(self, client: LLMClient, top: int = 50):
        self.client = client
        self.top = top
        self.template = load_template(TEMPLATE)

    async def rerank(
        self, query: str, hits: list[Any], statements: dict[int, str] | None = None
    ) -> RerankResult:
        """`hits`: search hits (`name`, `mention_id`, and `statement` unless `statements`, mention
        id → statement text, gives it)."""
        head, tail = hits[: self.top], hits[self.top :]
        ref = f"{self.template.ref} {self.template.hash[:12]}"
        if len(head) < 2:
            return RerankResult(hits=hits, reranked=False, template=ref)
        candidates = [
            {
                "n": i + 1,
                "name": h.name,
                "statement": " ".join(_statement(h, statements).split())[:STATEMENT_CHARS],
            }
            for i, h in enumerate(head)
        ]
        msgs = self.template.render(query=query, candidates=candidates)
        try:
            out = await structured(self.client, msgs, Ranking, retries=1, temperature=0.0)
        except LLMError as exc:
            return RerankResult(hits=hits, reranked=False, error=str(exc), template=ref)
        cached = bool(out.responses) and all(r.cached for r in out.responses)
        if out.value is None:
            # the unreadable replies are cached like any other: a repeated search asks nothing
            return RerankResult(
                hits=hits, reranked=False, error=out.error, template=ref, cached=cached
            )
        order = list(dict.fromkeys(n - 1 for n in out.value.ranking if 1 <= n <= len(head)))
        rest = [i for i in range(len(head)) if i not in set(order)]
        return RerankResult(
            hits=[head[i] for i in order + rest] + tail,
            reranked=True,
            template=ref,
            cached=cached,
        )


def _statement(hit: Any, statements: dict[int, str] | None) -> str:
    if statements is not None:
        return statements.get(hit.mention_id) or ""
    return getattr(hit, "statement", "") or ""


def rerank_with_model(
    settings: Settings, store: Store | None, model: str, query: str, hits: list[Any]
) -> RerankResult:
    """Rerank resolved search hits (`math2.retrieval.search`) with a registered model, its
    replies cached in the store (a repeated search makes no second call). Refuses an
    unregistered model (`UnregisteredModel`), and a search opened without a store
    (`LLMNotConfigured`: the model register and the reply cache are in it)."""
    import asyncio

    from math2.llm import LLMNotConfigured, make_client, require_model
    from math2.store.aio import AsyncStore

    if store is None:
        raise LLMNotConfigured("reranking reads the model register in the store: open one")

    with store.session() as s:
        require_model(s, model)

    async def go() -> RerankResult:
        astore = AsyncStore(store)
        client = make_client(settings, model, astore)
        try:
            return await Reranker(client).rerank(query, hits)
        finally:
            await client.aclose()
            await astore.aclose()

    return asyncio.run(go())
