"""Informal text as a part of its own (issue 45 §4): the informal statements and descriptions
the informalize role wrote for a declaration (`AgentText` rows with a mention) are a BM25 part,
`desc/`, that the fusion weighs (`stage.W_DESC`) and the learned ranker reads (`desc_rank`).
A user who runs informalize with a real model gets that lever.

Which texts: a person's confirmation, or no decision yet; never a rejected one, never one a
person replaced by an edit (the model's words were not what they accepted: the edit is node
text, `web.review`), never one the role's own checks did not accept (`extra.accepted` false:
its back-translation disagreed). All of a declaration's kept texts are its document.

Where it came from: a hit shows one text (the newest confirmed one, else the newest awaiting
review) with its origin: which model wrote it and whether a person reviewed it
(`Provenance`), so model text is never shown as if a person wrote it. The shown text and its
origin are kept beside the part (`desc/shown.*`, one tab-separated line per document).
The AI-written datasets (Herald, FrenzyMath's mathlib_informal) are search aids instead
(`aids.py`): their texts are never shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from math2.retrieval import lexical
from math2.retrieval.cards import first_line

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from math2.retrieval.parts import Tokenizer

PART = "desc"
SHOWN = "shown"


class Provenance(StrEnum):
    """Who stands behind an informal text a hit shows."""

    REVIEWED = "reviewed"  # a model wrote it and a person confirmed it
    UNREVIEWED = "unreviewed"  # a model wrote it; no person has decided on it yet


class InformalNote(BaseModel):
    """The informal text a hit shows, with where it came from."""

    text: str  # its first line
    model: str  # the model that wrote it (`name@revision`)
    provenance: Provenance

    @property
    def origin(self) -> str:
        """In words, for a reader: `written by m, not reviewed by a person`."""
        said = "confirmed by a person" if self.provenance is Provenance.REVIEWED else (
            "not reviewed by a person")  # fmt: skip
        return f"written by {self.model} (informalize), {said}"


@dataclass
class Informal:
    """One declaration's kept informal texts (oldest first) and the one a hit shows."""

    texts: list[str] = field(default_factory=list)
    shown: InformalNote | None = None


def read_informal(s: Session) -> dict[int, Informal]:
    """Mention id → its informal texts (see the module docstring)."""
    from sqlalchemy import select

    from math2.store import AgentText, AgentTextKind, ModelEntry
    from math2.store.work import ReviewStatus

    kept = (ReviewStatus.CONFIRMED, ReviewStatus.PENDING)
    rows = s.execute(
        select(
            AgentText.mention_id,
            AgentText.body,
            AgentText.status,
            AgentText.extra,
            ModelEntry.name,
            ModelEntry.revision,
        )
        .join(ModelEntry, ModelEntry.id == AgentText.model_id)
        .where(
            AgentText.kind.in_([AgentTextKind.DESCRIPTION, AgentTextKind.INFORMAL_STATEMENT]),
            AgentText.mention_id.is_not(None),
            AgentText.status.in_(kept),
        )
        .order_by(AgentText.id)
    ).all()
    out: dict[int, Informal] = {}
    for mid, body, status, extra, model, revision in rows:
        if mid is None or not body.strip() or (extra or {}).get("accepted") is False:
            continue
        entry = out.setdefault(mid, Informal())
        entry.texts.append(body)
        provenance = (
            Provenance.REVIEWED if status == ReviewStatus.CONFIRMED else Provenance.UNREVIEWED
        )
        if (
            entry.shown is None
            or provenance is Provenance.REVIEWED
            or (entry.shown.provenance is Provenance.UNREVIEWED)
        ):  # the newest reviewed text, else the newest
            entry.shown = InformalNote(
                text=first_line(body), model=f"{model}@{revision}" if revision else model,
                provenance=provenance,
            )  # fmt: skip
    return out


def build_informal(
    ids: list[int], informal: dict[int, Informal], out: Path, tag: str, tok: Tokenizer,
    say: Callable[[str], None],
) -> int:  # fmt: skip
    """The `desc/` part over the declarations at index positions with informal text (their
    positions in `positions.npy`, what a hit shows in `shown.*`); how many it holds."""
    from math2.retrieval.parts import bm25, clear

    folder = out / PART
    clear(folder)
    pos = [i for i, mid in enumerate(ids) if mid in informal]
    if not pos:
        return 0
    docs = [informal[ids[i]] for i in pos]
    bm25([tok(" ".join(d.texts)) for d in docs], folder, f"{tag}: BM25 over informal texts")
    np.save(folder / "positions.npy", np.array(pos, dtype=np.int64))
    lines = [
        f"{d.shown.provenance}\t{d.shown.model}\t{d.shown.text}" if d.shown else "" for d in docs
    ]
    lexical.write_lines(folder / SHOWN, lines)
    reviewed = sum(d.shown is not None and d.shown.provenance is Provenance.REVIEWED for d in docs)
    say(f"BM25 over {len(pos)} declarations' informal texts ({reviewed} confirmed by a person)")
    return len(pos)


class InformalNotes:
    """What a built index shows of its informal texts, by index position."""

    def __init__(self, folder: Path):
        stem = folder / PART / SHOWN
        self._lines = lexical.Lines(stem) if stem.with_suffix(".txt").exists() else None
        pos = folder / PART / "positions.npy"
        self._pos = np.load(pos) if self._lines is not None and pos.exists() else None

    def __getitem__(self, position: int) -> InformalNote | None:
        if self._lines is None or self._pos is None or position < 0:
            return None
        at = int(np.searchsorted(self._pos, position))
        if at >= len(self._pos) or int(self._pos[at]) != position:
            return None
        line = self._lines[at]
        if not line:
            return None
        provenance, model, text = [*line.split("\t", 2), "", ""][:3]
        return InformalNote.model_construct(text=text, model=model,
                                            provenance=Provenance(provenance))  # fmt: skip
