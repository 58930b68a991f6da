"""Candidate pairs for the align role, and the human-made pairs its evaluation is measured on.

- `propose_by_search`: where no dataset gives pairs, each node of a library without a Lean
  binding is searched in Mathlib (`math2.retrieval`) with its title, comment and statement; the
  top hits become candidate crosswalk rows (never edges: only the align role accepts them).
- `stacks_pairs`: Mathlib's own `@[stacks TAG]` attributes, from a Lean source tree (the
  lexical scanner the Mathlib importer uses) or from the mentions a Mathlib import stored.
- `list_pairs`: the 1000+ and 100 lists' entries that name both a Metamath label and a Lean
  declaration (the lists' importer stores them as edges of one node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.crosswalk.nodes import NodeIndex
from math2.errors import Math2Error
from math2.importers.lean_source import lean_files, scan_file
from math2.store.models import Binding, Crosswalk, Mention, Node, Source

# (query, k) -> [(declaration name, mention id)], best first
Searcher = Callable[[str, int], list[tuple[str, int]]]

LIST_SOURCES = ("1000-plus", "wiedijk-100", "mathlib-theorem-lists")


@dataclass(frozen=True)
class HumanPair:
    """A pair a person made: the other system's id and the Lean declaration."""

    system: str  # stacks | metamath
    other: str
    lean: str
    dataset: str


def query_of(node: Node, m: Mention | None) -> str:
    """The search text of a node: its title, its declaration's comment and statement."""
    parts = [node.title or ""]
    if m is not None:
        parts += [m.docstring or "", m.statement or ""]
    return " ".join(p.strip() for p in parts if p and p.strip())[:1000]


def propose_by_search(
    s: Session, library: str, search: Searcher, *, limit: int | None = None, k: int = 3
) -> int:
    """Candidate rows for up to `limit` nodes of `library` without a Lean binding; their count."""
    src = s.scalar(select(Source).where(Source.name == library))
    if src is None:
        raise Math2Error(f"no source named {library!r} in the store (import it first)")
    bound = select(Binding.node_id)
    rows = s.execute(
        select(Node, Mention)
        .join(Mention, Mention.node_id == Node.id)
        .where(Mention.source_id == src.id, Mention.status == "active")
        .where(Node.id.not_in(bound))
        .order_by(Node.id)
    )
    index = NodeIndex(s)
    seen: set[int] = set()
    for node, m in rows:
        if node.id in seen:
            continue
        if limit is not None and len(seen) >= limit:
            break
        seen.add(node.id)
        query = query_of(node, m)
        if not query:
            continue
        for rank, (name, mention_id) in enumerate(search(query, k), 1):
            if index.edge(
                node,
                "lean4",
                name,
                src.id,
                None,
                status="candidate",
                extra={"proposed_by": "search", "rank": rank, "query": query[:200]},
            ):
                s.flush()
                s.execute(
                    Crosswalk.__table__.update()
                    .where(
                        Crosswalk.node_id == node.id,
                        Crosswalk.system == "lean4",
                        Crosswalk.target == name,
                        Crosswalk.source_id == src.id,
                    )
                    .values(mention_id=mention_id)
                )
    return index.created_edges


def scan_stacks(root: Path) -> Iterator[HumanPair]:
    """`@[stacks TAG]` pairs in a Lean source tree (Mathlib at its pin, or a fixture)."""
    for path in lean_files(root):
        for d in scan_file(root, path).declarations:
            for tag in d.stacks:
                if d.name:
                    yield HumanPair("stacks", tag, d.name, "mathlib @[stacks]")


def stacks_pairs(s: Session) -> list[HumanPair]:
    """`@[stacks TAG]` pairs from the Mathlib mentions in the store (`extra["stacks"]`)."""
    out = []
    for name, extra in s.execute(
        select(Mention.name, Mention.extra).where(Mention.status == "active")
    ):
        for tag in (extra or {}).get("stacks") or []:
            out.append(HumanPair("stacks", tag, name, "mathlib @[stacks]"))
    return out


def list_pairs(s: Session) -> list[HumanPair]:
    """Metamath ↔ Lean pairs: nodes a theorem list gives both a Metamath and a Lean edge."""
    ids = list(s.scalars(select(Source.id).where(Source.name.in_(LIST_SOURCES))))
    edges: dict[int, dict[str, list[str]]] = {}
    for node_id, system, target in s.execute(
        select(Crosswalk.node_id, Crosswalk.system, Crosswalk.target).where(
            Crosswalk.source_id.in_(ids), Crosswalk.system.in_(("metamath", "lean4"))
        )
    ):
        edges.setdefault(node_id, {}).setdefault(system, []).append(target)
    out = []
    for sides in edges.values():
        for label in sides.get("metamath", []):
            for lean in sides.get("lean4", []):
                out.append(HumanPair("metamath", label, lean, "theorem lists"))
    return out
