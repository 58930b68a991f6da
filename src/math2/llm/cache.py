"""The persistent response cache: a reply is stored before anyone uses it, so reruns are free."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.orm import Session

from math2.llm.types import ChatResponse
from math2.store.aio import AsyncStore
from math2.store.upsert import insert_ignore
from math2.store.work import LLMResponse


class ResponseCache(Protocol):
    """What the client needs of a cache."""

    async def get(self, key: str) -> ChatResponse | None:
        """The stored reply for a key, or None."""
        ...

    async def put(self, response: ChatResponse) -> None:
        """Store a reply (returns once it is stored)."""
        ...


class MemoryCache:
    """A cache in a dict (tests, one-off scripts)."""

    def __init__(self) -> None:
        self.data: dict[str, ChatResponse] = {}

    async def get(self, key: str) -> ChatResponse | None:
        """The stored reply, or None."""
        return self.data.get(key)

    async def put(self, response: ChatResponse) -> None:
        """Store a reply."""
        self.data[response.key] = response


class StoreCache:
    """The cache in the store's `llm_responses` table, through the async writer."""

    def __init__(self, astore: AsyncStore):
        self.astore = astore

    async def get(self, key: str) -> ChatResponse | None:
        """The stored reply, or None."""

        def read(s: Session) -> dict | None:
            row = s.get(LLMResponse, key)
            return dict(row.response) if row is not None else None

        data = await self.astore.read(read)
        return ChatResponse.model_validate(data) if data is not None else None

    async def put(self, response: ChatResponse) -> None:
        """Store a reply; returns after the commit."""
        data = response.model_dump(mode="json")

        def write(s: Session) -> None:
            insert_ignore(
                s,
                LLMResponse,
                {
                    "key": response.key,
                    "model": response.model,
                    "request": data["request"],
                    "response": data,
                },
            )

        await self.astore.write(write)
