"""Drawing the sample audit (K9.7): a stratified sample of accepted pairs.

Accepted pairs come from the store's agent text (every role's output that its checks accepted
and no person rejected) or from a JSONL file of pairs (`role`, `library`, `stratum` fields).
Each cell (role, library, stratum) is sampled on its own: `per_stratum` pairs, or `fraction` of
the cell (at least one), drawn with a seeded generator so a drawing can be repeated. A drawing
has a name; drawing again under the same name adds only pairs it does not hold yet.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.checks.base import pair_key
from math2.store.models import Mention, Source
from math2.store.work import AgentText, AgentTextKind, AuditSample, ReviewStatus

__all__ = ["Candidate", "candidates_from_file", "candidates_from_store", "draw", "role_of"]


@dataclass(frozen=True)
class Candidate:
    role: str
    library: str
    stratum: str
    informal: str
    formal: str
    agent_text_id: int | None = None

    @property
    def key(self) -> str:
        return pair_key(self.informal, self.formal)


def role_of(kind: str) -> str:
    """The role that writes agent text of a kind."""
    return {
        AgentTextKind.FORMAL_STATEMENT: "formalize",
        AgentTextKind.INFORMAL_STATEMENT: "informalize",
        AgentTextKind.DESCRIPTION: "informalize",
        AgentTextKind.AUGMENTATION: "augment",
    }.get(kind, kind)


def candidates_from_store(s: Session) -> list[Candidate]:
    """Accepted agent text: not rejected, with a source text, and not marked unaccepted."""
    out = []
    rows = s.execute(
        select(AgentText, Source.name)
        .outerjoin(Mention, Mention.id == AgentText.mention_id)
        .outerjoin(Source, Source.id == Mention.source_id)
        .where(AgentText.status != ReviewStatus.REJECTED)
        .order_by(AgentText.id)
    )
    for t, source_name in rows:
        extra = t.extra or {}
        if not t.source_text or extra.get("accepted") is False:
            continue
        role = role_of(t.kind)
        formal_side = t.kind == AgentTextKind.FORMAL_STATEMENT
        out.append(
            Candidate(
                role=role,
                library=str(extra.get("library") or source_name or "-"),
                stratum=str(extra.get("stratum") or t.kind),
                informal=t.source_text if formal_side else t.body,
                formal=t.body if formal_side else t.source_text,
                agent_text_id=t.id,
            )
        )
    return out


def candidates_from_file(path: Path) -> list[Candidate]:
    """Pairs from JSONL (the same reader as `math2 check`), with role/library/stratum fields."""
    from math2.checks.pairs import read_pairs

    return [
        Candidate(
            role=str(p.meta.get("role", "-")),
            library=str(p.meta.get("library", "-")),
            stratum=str(p.meta.get("stratum", "-")),
            informal=p.informal,
            formal=p.formal,
            agent_text_id=p.meta.get("agent_text_id"),
        )
        for p in read_pairs(path)
    ]


def draw(
    s: Session,
    audit: str,
    candidates: list[Candidate],
    *,
    per_stratum: int | None = None,
    fraction: float | None = None,
    seed: int = 0,
) -> dict[tuple[str, str, str], tuple[int, int]]:
    """Sample each cell and store the drawing; {cell: (population, sampled now or before)}."""
    if (per_stratum is None) == (fraction is None):
        raise ValueError("give either per_stratum or fraction")
    if fraction is not None and not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], not {fraction}")
    cells: dict[tuple[str, str, str], dict[str, Candidate]] = defaultdict(dict)
    for c in candidates:
        cells[(c.role, c.library, c.stratum)].setdefault(c.key, c)
    have = {k for k in s.scalars(select(AuditSample.pair_key).where(AuditSample.audit == audit))}
    report = {}
    for cell in sorted(cells):
        members = [cells[cell][k] for k in sorted(cells[cell])]
        want = per_stratum if per_stratum is not None else math.ceil(fraction * len(members))
        cell_seed = int.from_bytes(hashlib.sha256(f"{seed}|{'|'.join(cell)}".encode()).digest()[:8])
        random.Random(cell_seed).shuffle(members)
        chosen = members[: min(want, len(members))]
        for c in chosen:
            if c.key in have:
                continue
            s.add(
                AuditSample(
                    audit=audit,
                    role=c.role,
                    library=c.library,
                    stratum=c.stratum,
                    informal=c.informal,
                    formal=c.formal,
                    pair_key=c.key,
                    agent_text_id=c.agent_text_id,
                )
            )
            have.add(c.key)
        report[cell] = (len(members), len(chosen))
    s.flush()
    return report
