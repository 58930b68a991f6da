"""The `DescriptionBoard`: the informal text of the declarations of one informalize run, as they
are written, so a declaration's prompt carries the text of what it uses (`job.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.runs import ItemContext
from math2.services import RoleServices
from math2.store.work import ItemStatus, RunItem


class DescriptionBoard:
    """The informal text of the declarations of one run, as they are written (or known before):
    one board per drive of the run (segment) and process, `board_for(ctx)`.

    Made, it reads the run's finished items once (done: the text when accepted; failed for good:
    none). A declaration finished in this process resolves at once; one finished elsewhere (by
    another Ray worker) is read from the store while an item waits for it, at growing intervals.
    """

    POLL_S = 0.1
    POLL_MAX_S = 2.0
    MAX_ATTEMPTS = 3  # the engine's: a failed item started this often is not tried again

    def __init__(self, run_id: int):
        self.run_id = run_id
        self._text: dict[str, str | None] = {}
        self._events: dict[str, asyncio.Event] = {}
        self._seeded: asyncio.Future[None] | None = None

    def _event(self, name: str) -> asyncio.Event:
        return self._events.setdefault(name, asyncio.Event())

    def resolve(self, name: str, text: str | None) -> None:
        self._text[name] = text
        self._event(name).set()

    async def _seed(self, ctx: ItemContext[RoleServices]) -> None:
        if self._seeded is None:
            self._seeded = asyncio.get_running_loop().create_future()
            rows = await ctx.astore.read(_finished_items(self.run_id, self.MAX_ATTEMPTS))
            for name, text in rows.items():
                self.resolve(name, text)
            self._seeded.set_result(None)
        await self._seeded

    async def get(self, name: str, ctx: ItemContext[RoleServices]) -> str | None:
        """The text of `name`, an item of the run (waiting until it is written)."""
        await self._seed(ctx)
        event = self._event(name)
        poll = self.POLL_S
        while not event.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(event.wait(), poll)
            if not event.is_set():
                finished = await ctx.astore.read(_finished_item(self.run_id, name))
                if finished is not None:
                    self.resolve(name, finished[1])
            poll = min(2 * poll, self.POLL_MAX_S)
        return self._text.get(name)


_BOARDS: dict[tuple[int, int | None], DescriptionBoard] = {}


def board_for(ctx: ItemContext[RoleServices]) -> DescriptionBoard:
    """The board of the run's current drive in this process (a resume starts a fresh one)."""
    key = (ctx.run_id, ctx.segment_id)
    if key not in _BOARDS:
        while len(_BOARDS) >= 8:
            _BOARDS.pop(next(iter(_BOARDS)))
        _BOARDS[key] = DescriptionBoard(ctx.run_id)
    return _BOARDS[key]


def _accepted_text(status: str, result: dict[str, Any] | None) -> str | None:
    r = result or {}
    return r.get("informal") if status == ItemStatus.DONE and r.get("accepted") else None


def _finished_items(run_id: int, max_attempts: int) -> Callable[[Session], dict[str, str | None]]:
    """A read of the run's finished items: each one's accepted text, or None."""

    def read(s: Session) -> dict[str, str | None]:
        rows = s.execute(
            select(RunItem.item, RunItem.status, RunItem.attempt_count, RunItem.result).where(
                RunItem.run_id == run_id,
                RunItem.status.in_((ItemStatus.DONE, ItemStatus.FAILED)),
            )
        )
        return {
            item: _accepted_text(status, result)
            for item, status, count, result in rows
            if status == ItemStatus.DONE or count >= max_attempts
        }

    return read


def _finished_item(run_id: int, name: str) -> Callable[[Session], tuple[bool, str | None] | None]:
    """A read of one item of the run: (True, its accepted text or None) once it is finished."""

    def read(s: Session) -> tuple[bool, str | None] | None:
        row = s.execute(
            select(RunItem.status, RunItem.result).where(
                RunItem.run_id == run_id, RunItem.item == name
            )
        ).first()
        if row is None or row[0] not in (ItemStatus.DONE, ItemStatus.FAILED):
            return None
        return True, _accepted_text(row[0], row[1])

    return read
