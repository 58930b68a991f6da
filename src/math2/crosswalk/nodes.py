"""Nodes and crosswalk edges, written idempotently (a re-import adds nothing twice).

A node's title, MSC class, Wikidata id and `selected_by` do not depend on the order in which
sources arrived: every source that names a node records what it says under
`extra["named_by"][source]`, and the node shows the values of the strongest source by a fixed
precedence (`PRECEDENCE`, then any other source by name, then node selection's own signals).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.store.models import Crosswalk, Node

# Who names a node, strongest first: the curated theorem lists, then libraries whose concepts
# carry Wikidata ids, then matching datasets; node selection's signals come last.
PRECEDENCE = (
    "1000-plus",
    "mathlib-theorem-lists",
    "wiedijk-100",
    "agda-unimath",
    "stacks-alignment",
    "theoremgraph",
)
SELECTION_SIGNALS = ("module-doc main result", "request", "statement dependency")
NAMED_FIELDS = ("title", "msc", "wikidata")


def precedence(selected_by: str | None) -> tuple[int, str]:
    """Sort key of a naming source: lower is stronger."""
    name = selected_by or ""
    if name in PRECEDENCE:
        return (0, f"{PRECEDENCE.index(name):04d}")
    if name in SELECTION_SIGNALS:
        return (2, f"{SELECTION_SIGNALS.index(name):04d}")
    return (1, name)


def resolve(node: Node) -> None:
    """Set the node's shown fields from `extra["named_by"]` by precedence."""
    named = (node.extra or {}).get("named_by") or {}
    if not named:
        return
    order = sorted(named, key=precedence)
    node.selected_by = order[0]
    for f in NAMED_FIELDS:
        for src in order:
            v = named[src].get(f)
            if v not in (None, ""):
                setattr(node, f, v)
                break


def name_node(node: Node, selected_by: str, fields: dict[str, Any]) -> None:
    """Record what `selected_by` says of the node, and show the strongest values."""
    extra = dict(node.extra or {})
    named = dict(extra.get("named_by") or {})
    if not named and node.selected_by and node.selected_by != selected_by:
        # a node from before named_by was kept: what it shows came from its selected_by
        named[node.selected_by] = {
            f: getattr(node, f) for f in NAMED_FIELDS if getattr(node, f) not in (None, "")
        }
    mine = dict(named.get(selected_by) or {})
    mine.update({k: v for k, v in fields.items() if k in NAMED_FIELDS and v not in (None, "")})
    named[selected_by] = mine
    extra["named_by"] = named
    node.extra = extra
    resolve(node)


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
        """The node with `key`, created if new; what `selected_by` says of its title, MSC and
        Wikidata id is recorded, and the node shows the strongest source's values."""
        node = self._by_key.get(key)
        if node is None:
            node = Node(key=key, selected_by=selected_by, **fields)
            name_node(node, selected_by, fields)
            self.session.add(node)
            self.session.flush()
            self._by_key[key] = node
            self.created_nodes += 1
        else:
            for k, v in fields.items():
                if k not in NAMED_FIELDS and getattr(node, k) in (None, "", {}):
                    setattr(node, k, v)
            name_node(node, selected_by, fields)
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
