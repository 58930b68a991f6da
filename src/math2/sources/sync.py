"""Write the manifest into the store: a row per source, a row per pin with the class there."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.sources.manifest import Manifest, SourceEntry
from math2.store.models import Pin, Source


@dataclass
class SyncReport:
    """What a sync changed."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    new_pins: list[str] = field(default_factory=list)
    class_changes: list[str] = field(default_factory=list)


def sync_manifest(session: Session, manifest: Manifest) -> SyncReport:
    """Upsert every source and pin; a pin keeps the class it was given (K6.3)."""
    report = SyncReport()
    for entry in manifest.sources:
        sync_source(session, entry, manifest.digest, report)
    return report


def sync_source(
    session: Session, entry: SourceEntry, digest: str, report: SyncReport | None = None
) -> Source:
    """Upsert one source and its pins; return the row."""
    report = report or SyncReport()
    decision = entry.decide()
    row = session.scalar(select(Source).where(Source.name == entry.name))
    values = dict(
        title=entry.title,
        system=entry.system,
        kind=entry.kind.value,
        licence=entry.licence_at(),
        per_item_licence=entry.per_item_licence,
        authored=entry.authored.value,
        authored_reason=entry.authored_reason,
        route=entry.route,
        intake_class=decision.intake.value,
        bindings=decision.bindings,
        decided_by=f"{decision.rule.value}: {decision.reason}",
        manifest_digest=digest,
    )
    if row is None:
        row = Source(name=entry.name, **values)
        session.add(row)
        session.flush()
        report.added.append(entry.name)
    else:
        if row.intake_class != values["intake_class"]:
            report.class_changes.append(
                f"{entry.name}: {row.intake_class} -> {values['intake_class']}"
            )
        changed = any(getattr(row, k) != v for k, v in values.items() if k != "manifest_digest")
        for k, v in values.items():
            setattr(row, k, v)
        if changed:
            report.updated.append(entry.name)

    existing = {p.key: p for p in session.scalars(select(Pin).where(Pin.source_id == row.id))}
    current_key = entry.current_pin.key if entry.current_pin else None
    for pin in entry.pins:
        at = entry.decide(pin)
        prow = existing.get(pin.key)
        if prow is None:
            prow = Pin(
                source_id=row.id,
                key=pin.key,
                commit=pin.commit,
                version=pin.version,
                toolchain=pin.toolchain,
                licence=entry.licence_at(pin),
                intake_class=at.intake.value,
                bindings=at.bindings,
                decided_by=f"{at.rule.value}: {at.reason}",
            )
            session.add(prow)
            report.new_pins.append(f"{entry.name}@{pin.key}")
        prow.is_current = pin.key == current_key
    for key, prow in existing.items():
        prow.is_current = key == current_key
    session.flush()
    return row


def pin_row(session: Session, source: str, key: str | None = None) -> Pin:
    """The stored pin of a source (its current one when `key` is None)."""
    q = select(Pin).join(Source).where(Source.name == source)
    q = q.where(Pin.key == key) if key else q.where(Pin.is_current.is_(True))
    row = session.scalar(q)
    if row is None:
        raise LookupError(f"no pin {key or '(current)'} for source {source!r}: run `math2 init`")
    return row
