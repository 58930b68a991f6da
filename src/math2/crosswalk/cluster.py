"""The clustering pass (K4.3 pass 1, K6.7 step 4).

1. A crosswalk edge whose target is a declaration math2 has imported is linked to that mention,
   and the mention joins the node (outcome `node`).
2. Two Lean declarations with the same type hash state the same thing: a declaration without a
   node joins the node of its twin.
3. Nodes merge across systems through shared Wikidata ids: a node that carries the Wikidata id
   of a `wd:` node (and is not a suffixed variant of it) is merged into that node.

The result does not depend on the order in which sources were imported and clustered: a node
that node selection made for one declaration (`decl:…`) gives way to a crosswalk or twin node
that arrives later, exactly as if that had been there first.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from math2.crosswalk.nodes import precedence, resolve
from math2.store.models import Binding, Crosswalk, Mention, Node, Source, TextRecord


def _is_selection_node(node: Node | None) -> bool:
    """A node that node selection made for a single declaration."""
    return node is not None and node.key.startswith("decl:")


class ClusterReport(BaseModel):
    """What one pass changed."""

    edges_linked: int = 0
    mentions_joined: int = 0
    conflicts: int = 0  # a declaration already on another node: left as it is, counted
    type_hash_joined: int = 0
    nodes_merged: int = 0


def cluster(session: Session) -> ClusterReport:
    """Run the three steps; idempotent."""
    rep = ClusterReport()
    _link_edges(session, rep)
    _type_hash(session, rep)
    _merge_wikidata(session, rep)
    session.flush()
    return rep


# Only a same_as edge joins a declaration to a node (an `implies` edge of the align role never).
SAME_AS = Crosswalk.relation == "same_as"


def _link_edges(session: Session, rep: ClusterReport) -> None:
    sources_by_system: dict[str, list[int]] = defaultdict(list)
    source_names: dict[int, str] = {}
    for sid, system, name in session.execute(select(Source.id, Source.system, Source.name)):
        sources_by_system[system].append(sid)
        source_names[sid] = name
    edges = session.scalars(
        select(Crosswalk).where(
            Crosswalk.mention_id.is_(None), Crosswalk.status == "accepted", SAME_AS
        )
    ).all()
    by_system: dict[str, list[Crosswalk]] = defaultdict(list)
    for e in edges:
        if sources_by_system.get(e.system):
            by_system[e.system].append(e)
    touched: dict[int, Mention] = {}
    for system, group in by_system.items():
        names = {e.target for e in group}
        mentions = {}
        for m in session.scalars(
            select(Mention)
            .where(
                Mention.source_id.in_(sources_by_system[system]),
                Mention.status == "active",
                Mention.name.in_(names),
            )
            .order_by(Mention.source_id, Mention.name)
        ):
            mentions.setdefault(m.name, m)
        for e in group:
            m = mentions.get(e.target)
            if m is None:
                continue
            e.mention_id = m.id
            rep.edges_linked += 1
            touched[m.id] = m
    if not touched:
        return
    session.flush()
    # A declaration that several nodes claim sits on the claim of the strongest list (then the
    # node key): the same whichever list arrived first.
    claims: dict[int, list[tuple[tuple[int, str], str, int]]] = defaultdict(list)
    ids = list(touched)
    for i in range(0, len(ids), 5000):
        q = (
            select(Crosswalk.mention_id, Crosswalk.source_id, Node.key, Node.id)
            .join(Node, Node.id == Crosswalk.node_id)
            .where(
                Crosswalk.mention_id.in_(ids[i : i + 5000]),
                Crosswalk.status == "accepted",
                SAME_AS,
            )
        )
        for mid, sid, key, nid in session.execute(q):
            claims[mid].append((precedence(source_names.get(sid)), key, nid))
    for mid, m in touched.items():
        best = min(claims[mid])[2]
        if m.node_id == best:
            continue
        if m.node_id is None:
            m.node_id, m.outcome = best, "node"
            rep.mentions_joined += 1
            continue
        current = session.get(Node, m.node_id)
        if _is_selection_node(current):  # a list names it: as if the list came first
            merge_nodes(session, keep=session.get(Node, best), drop=current)
            rep.mentions_joined += 1
        else:
            m.node_id = best
            rep.conflicts += 1


def _type_hash(session: Session, rep: ClusterReport) -> None:
    lean_sources = [
        sid for (sid,) in session.execute(select(Source.id).where(Source.system == "lean4"))
    ]
    if not lean_sources:
        return
    groups: dict[str, list[Mention]] = defaultdict(list)
    for m in session.scalars(
        select(Mention).where(
            Mention.source_id.in_(lean_sources),
            Mention.status == "active",
            Mention.type_hash.is_not(None),
        )
    ):
        groups[m.type_hash].append(m)  # type: ignore[index]
    for twins in groups.values():
        if len(twins) < 2:
            continue
        on = {m.node_id: session.get(Node, m.node_id) for m in twins if m.node_id is not None}
        nodes = {nid for nid, n in on.items() if not _is_selection_node(n)}
        if len(nodes) != 1:
            continue
        (node_id,) = nodes
        keep = on[node_id]
        for m in twins:
            if m.node_id is None:
                m.node_id, m.outcome = node_id, "node"
                rep.type_hash_joined += 1
            elif m.node_id != node_id and _is_selection_node(on.get(m.node_id)):
                if session.get(Node, m.node_id) is not None:
                    merge_nodes(session, keep=keep, drop=on[m.node_id])
                m.node_id, m.outcome = node_id, "node"
                rep.type_hash_joined += 1


def _merge_wikidata(session: Session, rep: ClusterReport) -> None:
    nodes = session.scalars(select(Node).where(Node.wikidata.is_not(None))).all()
    canonical = {n.wikidata: n for n in nodes if n.key == f"wd:{n.wikidata}"}
    for n in nodes:
        target = canonical.get(n.wikidata)
        if target is None or target.id == n.id or n.key.startswith("wd:"):
            continue  # suffixed variants (wd:Q…X) are distinct theorems
        merge_nodes(session, keep=target, drop=n)
        rep.nodes_merged += 1


def merge_nodes(session: Session, keep: Node, drop: Node) -> None:
    """Move everything of `drop` onto `keep`, then delete `drop`.

    A node that selection made for one declaration leaves no trace on `keep` (no `merged`
    entry, no fields): the corpus is then the one where `keep` had been there first."""
    session.execute(update(Mention).where(Mention.node_id == drop.id).values(node_id=keep.id))
    session.execute(update(Binding).where(Binding.node_id == drop.id).values(node_id=keep.id))
    session.execute(update(TextRecord).where(TextRecord.node_id == drop.id).values(node_id=keep.id))
    have = {
        (c.system, c.target, c.source_id)
        for c in session.scalars(select(Crosswalk).where(Crosswalk.node_id == keep.id))
    }
    for c in session.scalars(select(Crosswalk).where(Crosswalk.node_id == drop.id)).all():
        if (c.system, c.target, c.source_id) in have:
            session.delete(c)
        else:
            c.node_id = keep.id
    if _is_selection_node(drop):
        session.flush()
        session.delete(drop)
        session.flush()
        return
    extra = dict(keep.extra or {})
    dropped = (drop.extra or {}).get("merged", [])
    extra["merged"] = sorted({*extra.get("merged", []), drop.key, *dropped})
    for k, v in (drop.extra or {}).items():
        extra.setdefault(k, v)
    named = {**(drop.extra or {}).get("named_by", {}), **extra.get("named_by", {})}
    if named:
        extra["named_by"] = named
    keep.extra = extra
    keep.title = keep.title or drop.title
    resolve(keep)
    session.flush()
    session.delete(drop)
    session.flush()
