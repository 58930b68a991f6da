"""The nodes a Ray run's batches may go to: alive, with CPUs, not refused, and not where a worker
just died; asked of Ray at most every `REFRESH_S` seconds (`ray_exec` drives a run over them)."""

from __future__ import annotations

import math
import time
from typing import Any

#: How often the driver asks Ray which nodes are alive (a node that joined gets work).
REFRESH_S = 2.0
#: How long a node where a worker died gets no new worker (while Ray notices whether the node
#: itself is gone), unless it is the only one left.
SUSPECT_S = 10.0


def node_id(ray: Any) -> str | None:
    try:
        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # a Ray Client driver has no node of its own
        return None


class Nodes:
    """The nodes a run's batches may go to: alive, with CPUs, not refused; asked of Ray at most
    every `REFRESH_S` seconds."""

    def __init__(self, ray: Any):
        self.ray = ray
        self.refused: dict[str, str] = {}
        self.seen: set[str] = set()
        self._alive: list[str] = []
        self._at = -math.inf
        self._suspect: dict[str, float] = {}  # node: when a worker there last died

    def _listed(self) -> list[str]:
        if time.monotonic() - self._at > REFRESH_S:
            self._at = time.monotonic()
            alive = [n for n in self.ray.nodes() if n.get("Alive")]
            working = [n for n in alive if (n.get("Resources") or {}).get("CPU", 0) > 0]
            self._alive = sorted(n["NodeID"] for n in working or alive)
            self.seen |= set(self._alive)
        return self._alive

    def refuse(self, node: str, why: str) -> None:
        self.refused.setdefault(node, why)

    def forget(self, node: str) -> None:
        """A worker on `node` died: ask Ray again at the next look, and send nothing there
        until Ray says it lives (a dead node leaves the list once Ray notices)."""
        self._at = -math.inf
        self._suspect[node] = time.monotonic()

    def usable(self) -> list[str]:
        """The nodes batches may go to: alive, not refused, and none where a worker died in
        the last `SUSPECT_S` (unless no other node is left)."""
        alive = [n for n in self._listed() if n not in self.refused]
        now = time.monotonic()
        ok = [n for n in alive if now - self._suspect.get(n, -math.inf) > SUSPECT_S]
        return ok or alive
