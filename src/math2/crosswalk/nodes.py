"""Nodes and crosswalk edges, written idempotently (a re-import adds nothing twice)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.store.models import Crosswalk, Node


class NodeIndex:
    """Get-or-create nodes by key within one session, without a query per lookup."""

    def __init__(self, session: Session):
        self.session = session
        self._by_key = {n.key: n for n in session.scalars(select(Node))}
        self._edges = {
            (c.node_id, c.system, c.target, c.source_id)
            for c in session.execute(
                select(Crosswalk.node_id, Crosswalk.system, Crosswalk.target, Crosswalk.source_id)
            )
        }
        self.created_nodes = 0
        self.created_edges = 0

    def node(self, key: str, *, selected_by: str, **fields: Any) -> Node:
        """The node with `key`, created with `fields` if new (existing fields are kept)."""
        node = self._by_key.get(key)
        if node is None:
            node = Node(key=key, selected_by=selected_by, **fields)
            self.session.add(node)
            self.session.flush()
            self._by_key[key] = node
            self.created_nodes += 1
        else:
            for k, v in fields.items():
                if getattr(node, k) in (None, "", {}) and v not in (None, ""):
                    setattr(node, k, v)
        return node

    def edge(
        self,
        node: Node,
        system: str,
        target: str,
        source_id: int,
        pin_id: int | None,
        status: str = "accepted",
        extra: dict[str, Any] | None = None,
    ) -> bool:
        """Add a same_as edge unless the same one (node, system, target, source) exists."""
        key = (node.id, system, target, source_id)
        if key in self._edges:
            return False
        self.session.add(
            Crosswalk(
                node_id=node.id,
                system=system,
                target=target,
                source_id=source_id,
                pin_id=pin_id,
                status=status,
                extra=extra or {},
            )
        )
        self._edges.add(key)
        self.created_edges += 1
        return True
