"""Cross-system formalization (K6.6): a node's declaration in set.mm, Mizar or AFP as the
context of the formalize role. Each node becomes one formalize input whose statement carries
the node's title, the informal text a person wrote, and the source declaration (its comment and
statement), so the generator and the judge both see it; the result is agent text waiting for
review, i.e. a proposed binding."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.errors import Math2Error
from math2.store.models import Mention, Node, Source, TextRecord

SYSTEMS = {"setmm": "setmm", "mizar": "mizar-mml", "afp": "afp"}


def source_statement(s: Session, system: str, ref: str) -> dict[str, str]:
    """The formalize input for a node key or a declaration name of `system`'s library."""
    if system not in SYSTEMS:
        raise Math2Error(f"--from must be one of {', '.join(SYSTEMS)} (not {system!r})")
    src = s.scalar(select(Source).where(Source.name == SYSTEMS[system]))
    if src is None:
        raise Math2Error(f"the store has no {SYSTEMS[system]} library: import it first")
    m = s.scalar(
        select(Mention)
        .where(Mention.source_id == src.id, Mention.status == "active")
        .where((Mention.name == ref) | Mention.node_id.in_(select(Node.id).where(Node.key == ref)))
        .limit(1)
    )
    if m is None:
        raise Math2Error(f"no active {SYSTEMS[system]} declaration or node {ref!r} in the store")
    node = s.get(Node, m.node_id) if m.node_id else None
    parts = []
    if node is not None and node.title:
        parts.append(f"{node.title}.")
    if node is not None:
        person = s.scalars(
            select(TextRecord.body).where(
                TextRecord.node_id == node.id, TextRecord.author_kind == "person"
            )
        ).first()
        if person:
            parts.append(person)
    if m.docstring:
        parts.append(m.docstring.strip())
    parts.append(
        f"The source declaration ({src.system}, {src.name}, {m.name}), to state in Lean 4 "
        f"with Mathlib:\n{m.statement or ''}"
    )
    row = {"id": f"{system}:{m.name}", "statement": "\n\n".join(parts)}
    return row | ({"node": node.key} if node is not None else {})


def write_inputs(s: Session, system: str, refs: list[str], path: Path) -> Path:
    """A formalize JSONL file for the named nodes or declarations."""
    rows = [source_statement(s, system, r) for r in refs]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path
