"""The requests a fake model server received (`fake_server.py`): the hash each is counted
under, the same hash as the store keeps a call, the log file a server started with `--log`
writes, and the requests answered more than once."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def request_hash(body: dict[str, Any]) -> str:
    """The hash a request is counted under (the whole body, canonical)."""
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


#: What the model client adds to a request when it sends it (streaming), not part of what the
#: store keeps of the call (`LLMResponse.request`).
SENT_ONLY = ("stream", "stream_options")


def as_stored(body: dict[str, Any]) -> str:
    """A request the server received, hashed as the store keeps it (without what the client
    adds when it sends), so the two compare: `request_hash(r.request)` of a stored reply
    equals this for the request it answered, and a stored reply asked again shows."""
    return request_hash({k: v for k, v in body.items() if k not in SENT_ONLY})


def received(entries: Iterable[dict[str, Any]]) -> set[str]:
    """The answered requests of a server's log (`read_log`, `FakeServer.requests`), hashed as
    `as_stored` does."""
    return {as_stored(e["body"]) for e in entries if e.get("status", 200) == 200}


def read_log(path: Path) -> list[dict[str, Any]]:
    """The requests a server started with `--log` received, in order (a torn last line skipped)."""
    entries = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def repeats(entries: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Request hashes received more than once, with their counts (answered calls only)."""
    counts = Counter(e["hash"] for e in entries if e.get("status", 200) == 200)
    return {h: n for h, n in counts.items() if n > 1}
