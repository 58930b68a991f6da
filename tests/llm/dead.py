"""A dead model endpoint (a closed port) and what a job must show when it meets one: the item
step lets `EndpointDown` out (it is no verdict on the item), so no item that met it is `done`."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import select

from math2.llm import EndpointDown
from math2.store.work import RunItem

#: how many calls in a row that cannot connect make the endpoint down, in these tests
DOWN_AFTER = 2


def dead_url() -> str:
    """The base URL of a port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def dead_settings(settings: Any) -> Any:
    """`settings` with a dead model endpoint: no retries, down after `DOWN_AFTER` calls."""
    llm = settings.llm.model_copy(
        update={"base_url": dead_url(), "max_retries": 0, "down_after": DOWN_AFTER}
    )
    return settings.model_copy(update={"llm": llm})


def run_until_down(run: Callable[[], Awaitable[Any]]) -> Any | None:
    """Run a job; its summary, or None when the engine stopped it by raising EndpointDown."""
    try:
        return asyncio.run(run())  # type: ignore[arg-type]
    except EndpointDown:
        return None


def met_endpoint_down(store: Any, *, done_before: int) -> list[RunItem]:
    """The run's items: exactly `done_before` items done (those whose calls failed before the
    endpoint was down, as the job treats any failed call), and every other one stopped by
    `EndpointDown` (where the engine recorded an error, it names it) — none swallowed into a
    verdict. Returns the items that were not done."""
    with store.session() as s:
        rows = list(s.scalars(select(RunItem)))
    assert rows, "the run recorded no item"
    done = [r for r in rows if r.status == "done"]
    assert len(done) == done_before, [(r.item, r.status, r.error) for r in rows]
    rest = [r for r in rows if r.status != "done"]
    assert rest, "no item met the dead endpoint"
    plain = DOWN_AFTER - 1 - done_before  # items failed by a plain LLMError before that
    errors = [r.error for r in rest if r.error]
    assert all("EndpointDown" in e or "LLMError" in e for e in errors), errors
    # an engine that leaves stopped items pending records no error on them; any error it
    # does record names EndpointDown, but for at most `plain` items failed before that
    assert sum("EndpointDown" not in e for e in errors) <= plain, errors
    return rest
