"""Both sides of a candidate pair, as the store holds them.

The node side is the node's title, the informal statement a person wrote for it (agent text
never counts), and the statement and comment of the node's declaration in its own system (a
set.mm `$p` with its comment, a Mizar or AFP text, a Lean declaration at another pin). The Lean
side is the declaration's statement and docstring with its dependency context: the statements
of the constants it uses that the same library declares (lean_scout `const_deps` where
imported, else the names that occur in the statement).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.reader import statement_names
from math2.roles.align.schemas import AlignPair, Side
from math2.store.models import ConstDep, Crosswalk, Mention, Node, Source, TextRecord

MAX_TEXT = 2000
MAX_DEPS = 6


def lean_mention(s: Session, system: str, name: str, mention_id: int | None) -> Mention | None:
    """The declaration a crosswalk row points at: its mention, else the active one by name."""
    if mention_id is not None and (m := s.get(Mention, mention_id)) is not None:
        return m
    return s.scalar(
        select(Mention)
        .join(Source, Source.id == Mention.source_id)
        .where(Source.system == system, Mention.name == name, Mention.status == "active")
        .order_by(Mention.id.desc())
        .limit(1)
    )


def used_names(s: Session, m: Mention) -> list[str]:
    """The constants a declaration's statement uses (const_deps, else the names it mentions as
    Lean reads them, `math2.lean.reader`; the store decides which are the library's)."""
    dep = s.get(ConstDep, m.id)
    if dep is not None and dep.deps:
        return [d for d in dep.deps if d != m.name]
    return statement_names(m.statement, exclude=m.name)


def same_library_decls(s: Session, m: Mention, names: list[str]) -> list[Mention]:
    """The active declarations of m's library among `names` (in the order of `names`)."""
    if not names:
        return []
    rows = {
        r.name: r
        for r in s.scalars(
            select(Mention).where(
                Mention.source_id == m.source_id,
                Mention.status == "active",
                Mention.name.in_(names),
            )
        )
    }
    return [rows[n] for n in names if n in rows]


def lean_side(s: Session, system: str, target: str, mention_id: int | None) -> Side:
    m = lean_mention(s, system, target, mention_id)
    if m is None:
        return Side(system=system, name=target, text=f"(declaration {target}: not in the store)")
    body = m.statement or target
    if m.docstring:
        body = f"/-- {m.docstring.strip()} -/\n{body}"
    deps = same_library_decls(s, m, used_names(s, m))[:MAX_DEPS]
    context = "\n".join(f"{d.name}: {(d.statement or '')[:300]}" for d in deps)
    return Side(system=system, name=m.name, text=body[:MAX_TEXT], context=context)


def _node_side(s: Session, node: Node, not_system: str, not_name: str) -> Side:
    parts: list[str] = []
    if node.title:
        parts.append(f"Title: {node.title}")
    person = s.scalars(
        select(TextRecord.body).where(
            TextRecord.node_id == node.id, TextRecord.author_kind == "person"
        )
    ).first()
    if person:
        parts.append(f"Statement: {person}")
    system = node.key.split(":", 1)[0]
    name = node.key.split(":", 1)[-1]
    decl = s.execute(
        select(Mention, Source.system)
        .join(Source, Source.id == Mention.source_id)
        .where(Mention.node_id == node.id, Mention.status == "active")
        .where(~((Source.system == not_system) & (Mention.name == not_name)))
        .order_by(Mention.id)
        .limit(1)
    ).first()
    if decl is not None:
        m, system = decl
        name = m.name
        if m.docstring:
            parts.append(f"Comment: {m.docstring.strip()}")
        if m.statement:
            parts.append(f"Statement ({system}): {m.statement}")
    text = "\n".join(parts) or f"(only its key: {node.key})"
    return Side(system=system, name=name, text=text[:MAX_TEXT])


def pair_of(s: Session, cw: Crosswalk) -> AlignPair:
    """The pair a crosswalk row proposes, with both sides' text."""
    node = s.get(Node, cw.node_id)
    dataset = s.get(Source, cw.source_id).name
    return AlignPair(
        id=f"cw:{cw.id}",
        crosswalk_id=cw.id,
        dataset=dataset,
        left=_node_side(s, node, cw.system, cw.target),
        right=lean_side(s, cw.system, cw.target, cw.mention_id),
    )
