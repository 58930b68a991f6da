"""Candidate pairs between Mathlib and the six other systems (K6.6: Rocq, HOL Light, HOL4,
Naproche, PVS/NASALib, ACL2), for the align role: the theorem lists give them almost no
identifiers (the 1000+ list has a handful of HOL Light and Rocq names, no field for the others),
so the only way to link them is to propose pairs and let the judge decide.

Each candidate is a crosswalk row `(node, SYSTEM, that system's declaration)` with status
`candidate`, proposed by the system's source (so `math2 align --dataset hol4` judges them); the
node side is what the node says (its title, its Lean declaration's statement), the other side
the system's declaration (`sides.lean_side` reads any system's mention). Two channels:

- **names**: a declaration of the system whose last two name parts (`Nat.add_comm`), or whose
  last part when one Mathlib declaration on a node has it, are those of a Mathlib declaration on
  a node, compared without case and with `-` read as `_` (`ADD_SYM` ~ `add_sym`);
- **facts**: a node whose theorem-list facts say the system formalizes it (Wiedijk's 100, the
  1000+ list) and that has a Lean declaration: the node's title and the declaration's name and
  statement searched in the system's own library (`math2.retrieval`), the top `k` hits.

Where a list gives the node a human link to the system (an accepted edge), `SystemCandidates`
counts whether it is among the node's candidates (the share in the top `k`); the human edge
itself is not proposed again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from math2.crosswalk.nodes import NodeIndex
from math2.store.models import Crosswalk, Mention, Node, Source

# math2's system name -> the source of its library in the manifest
SYSTEM_SOURCES = {
    "rocq": "rocq-stdlib",
    "hol-light": "hol-light",
    "hol4": "hol4",
    "naproche": "naproche",
    "pvs": "nasalib",
    "acl2": "acl2-books",
}
# (library, query, k) -> [(declaration name, mention id)], best first
LibrarySearch = Callable[[str, str, int], list[tuple[str, int | None]]]


@dataclass
class SystemCandidates:
    """What was proposed for one system."""

    system: str
    source: str
    by_name: int = 0
    by_facts: int = 0
    nodes_with_facts: int = 0  # nodes a list says the system formalizes, with a Lean side
    human_links: int = 0  # of those, nodes a list links to a declaration of the system
    human_in_top: int = 0  # … whose human target is among the node's candidates

    @property
    def candidates(self) -> int:
        return self.by_name + self.by_facts


def _norm(part: str) -> str:
    return part.lower().replace("-", "_")


def name_keys(name: str) -> tuple[str, str]:
    """(last two parts, last part) of a name, normalized: `Stdlib.Arith.PeanoNat.Nat.add_comm`
    -> (`nat.add_comm`, `add_comm`); ACL2's `book:PKG::NAME` -> (`pkg.name`, `name`)."""
    if "::" in name:
        pkg, _, symbol = name.partition("::")
        parts = [pkg.rsplit(":", 1)[-1], symbol]
    else:
        parts = name.split(".")
    parts = [_norm(p) for p in parts if p]
    return ".".join(parts[-2:]), parts[-1] if parts else ""


def propose_for_systems(
    s: Session,
    search: LibrarySearch | None = None,
    *,
    k: int = 3,
    systems: Iterable[str] | None = None,
) -> list[SystemCandidates]:
    """Candidate rows for each system whose library is in the store (see the module doc)."""
    lean = _lean_on_nodes(s)
    by_two: dict[str, list[tuple[int, str]]] = {}
    by_last: dict[str, list[tuple[int, str]]] = {}
    for node_id, name, _ in lean:
        two, last = name_keys(name)
        by_two.setdefault(two, []).append((node_id, name))
        by_last.setdefault(last, []).append((node_id, name))
    index = NodeIndex(s)
    out = []
    for system in systems or SYSTEM_SOURCES:
        src = s.scalar(select(Source).where(Source.name == SYSTEM_SOURCES[system]))
        if src is None:
            continue
        got = SystemCandidates(system, src.name)
        for m in s.scalars(
            select(Mention).where(Mention.source_id == src.id, Mention.status == "active")
        ):
            two, last = name_keys(m.name)
            hits = by_two.get(two) or (by_last[last] if len(by_last.get(last, ())) == 1 else [])
            for node_id, lean_name in hits[:k]:
                got.by_name += _propose(
                    s, index, node_id, system, m.name, m.id, src, {"proposed_by": "name",
                                                                    "lean": lean_name}
                )  # fmt: skip
        if search is not None:
            _by_facts(s, index, system, src, search, k, got, lean)
        out.append(got)
    return out


def _lean_on_nodes(s: Session) -> list[tuple[int, str, str | None]]:
    """(node, Mathlib declaration, its statement) of every node with an accepted Lean edge."""
    rows = s.execute(
        select(Crosswalk.node_id, Crosswalk.target, Mention.statement)
        .outerjoin(Mention, Mention.id == Crosswalk.mention_id)
        .where(Crosswalk.system == "lean4", Crosswalk.status == "accepted")
        .order_by(Crosswalk.node_id, Crosswalk.id)
    )
    return [(n, t, st) for n, t, st in rows]


def _facts_systems(node: Node) -> set[str]:
    """The systems the theorem lists on a node say formalize it."""
    out: set[str] = set()
    for facts in ((node.extra or {}).get("lists") or {}).values():
        for f in (facts or {}).get("formalizations") or []:
            if f.get("system") and f.get("status", "formalized") != "not formalized":
                out.add(str(f["system"]))
    return out


def _by_facts(
    s: Session,
    index: NodeIndex,
    system: str,
    src: Source,
    search: LibrarySearch,
    k: int,
    got: SystemCandidates,
    lean: list[tuple[int, str, str | None]],
) -> None:
    first: dict[int, tuple[str, str | None]] = {}
    for node_id, name, statement in lean:
        first.setdefault(node_id, (name, statement))
    human: dict[int, set[str]] = {}
    for node_id, target in s.execute(
        select(Crosswalk.node_id, Crosswalk.target).where(
            Crosswalk.system == system, Crosswalk.status == "accepted"
        )
    ):
        human.setdefault(node_id, set()).add(target)
    for node_id, (name, statement) in sorted(first.items()):
        node = s.get(Node, node_id)
        if node is None or system not in _facts_systems(node):
            continue
        got.nodes_with_facts += 1
        query = " ".join(x for x in (node.title, name.replace(".", " "), statement) if x)
        hits = search(src.name, query[:1000], k)
        targets = human.get(node_id, set())
        if targets:
            got.human_links += 1
            got.human_in_top += bool(targets & {h for h, _ in hits})
        for rank, (target, mention_id) in enumerate(hits, 1):  # the list's own edge: skipped
            got.by_facts += _propose(
                s, index, node_id, system, target, mention_id, src,
                {"proposed_by": "facts", "rank": rank, "query": query[:200]},
            )  # fmt: skip


def _propose(
    s: Session,
    index: NodeIndex,
    node_id: int,
    system: str,
    target: str,
    mention_id: int | None,
    src: Source,
    extra: dict[str, object],
) -> int:
    node = s.get(Node, node_id)
    if node is None or s.scalar(
        select(Crosswalk.id).where(
            Crosswalk.node_id == node_id,
            Crosswalk.system == system,
            Crosswalk.target == target,
            Crosswalk.status == "accepted",
        )
    ):
        return 0  # no such node, or an edge already links them
    if not index.edge(node, system, target, src.id, None, "candidate", extra):
        return 0
    s.flush()
    s.execute(
        update(Crosswalk)
        .where(
            Crosswalk.node_id == node_id,
            Crosswalk.system == system,
            Crosswalk.target == target,
            Crosswalk.source_id == src.id,
        )
        .values(mention_id=mention_id)
    )
    return 1
