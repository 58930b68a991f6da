"""Rows for tests that seed a store by hand: a source, its pins, its mentions (one shape, with
the provenance every mention carries taken from its source and pin)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from math2.store.models import Mention, Pin, Source


def add_source(
    s: Session,
    name: str,
    *,
    system: str = "lean4",
    kind: str = "library",
    licence: str = "Apache-2.0",
    intake_class: str = "open_text+bindings",
    authored: str = "human",
    **fields: Any,
) -> Source:
    """A source row (flushed, so it has its id)."""
    values: dict[str, Any] = dict(
        title=name,
        authored_reason="test",
        route="test",
        bindings=True,
        decided_by="test",
        manifest_digest="d",
    )
    values.update(fields)
    src = Source(
        name=name,
        system=system,
        kind=kind,
        licence=licence,
        intake_class=intake_class,
        authored=authored,
        **values,
    )
    s.add(src)
    s.flush()
    return src


def add_pin(s: Session, src: Source, key: str, *, current: bool = True, **fields: Any) -> Pin:
    """A pin of `src` (its licence and class unless given; flushed)."""
    values: dict[str, Any] = dict(
        licence=src.licence, intake_class=src.intake_class, decided_by=src.decided_by
    )
    values.update(fields)
    pin = Pin(source_id=src.id, key=key, is_current=current, **values)
    s.add(pin)
    s.flush()
    return pin


def record_library_import(s: Session, src: Source, pin: Pin) -> None:
    """The finished import run a real `math2 import` leaves for a Lean library's pin, with
    the rule its rows were read under (`math2.lean.stored_rule`): a store seeded with library
    mentions but no such run is refused for verdicts, as one imported by an older math2."""
    from math2.lean.library import TABLES_RULE
    from math2.lean.stored_rule import LibraryImport
    from math2.store.work import Run, RunStatus

    rule = LibraryImport(route="source scan", tables_rule=TABLES_RULE)
    s.add(Run(job="import", key=f"{src.name}@{pin.key}", status=RunStatus.DONE,
              params=rule.params(), finished_at=dt.datetime.now(dt.UTC)))  # fmt: skip
    s.flush()


def mention_of(src: Source, pin: Pin, name: str, **fields: Any) -> Mention:
    """A mention of `src` at `pin` with its provenance (licence, class, authored) from them;
    not added to any session."""
    values: dict[str, Any] = dict(
        licence=pin.licence, intake_class=pin.intake_class, authored=src.authored
    )
    values.update(fields)
    return Mention(source_id=src.id, pin_id=pin.id, name=name, **values)
