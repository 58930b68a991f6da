"""What every importer shares: the run record that makes an import happen once per pin, and
bulk writes of mentions and texts that keep their provenance."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from math2.config import Settings
from math2.errors import Math2Error
from math2.importers.registry import ImportResult
from math2.sources.intake import IntakeClass
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Mention, Pin, Source, TextRecord
from math2.store.work import Run

TEXT_CLASSES = {IntakeClass.OPEN_TEXT.value, IntakeClass.OPEN_TEXT_SA.value}


class ImportConflict(Math2Error):
    """The data at hand is not the data already imported at this pin."""


def file_digest(path: Path) -> str:
    """sha256 of a file (or of every file under a directory, in name order)."""
    h = hashlib.sha256()
    paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in paths:
        if path.is_dir():
            h.update(str(p.relative_to(path)).encode())
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def source_and_pin(session: Session, name: str) -> tuple[Source, Pin]:
    """The stored source and its current pin (the manifest must have been synced)."""
    src = session.scalar(select(Source).where(Source.name == name))
    if src is None:
        raise Math2Error(f"source {name!r} is not in the store: run `math2 init`")
    pin = session.scalar(select(Pin).where(Pin.source_id == src.id, Pin.is_current.is_(True)))
    if pin is None:
        raise Math2Error(f"source {name!r} has no pin in the manifest; it cannot be imported")
    return src, pin


def already_done(session: Session, job: str, key: str, digest: str) -> bool:
    """Whether this exact import finished before (checked before any parsing work)."""
    run = session.scalar(select(Run).where(Run.job == job, Run.key == key))
    return run is not None and run.status == "done" and run.params.get("digest") == digest


def skip_if_done(store: Store, entry: SourceEntry, path: Path, digest: str) -> ImportResult | None:
    """The "already imported" result when this exact import finished before, else None."""
    with store.session() as s:
        _, pin = source_and_pin(s, entry.name)
        if already_done(s, "import", f"{entry.name}@{pin.key}", digest):
            return ImportResult(
                source=entry.name, pin=pin.key, path=str(path), counts={}, skipped_already_done=True
            )
    return None


def dir_locator(field: str, what: str) -> Callable[[Settings], tuple[Path | None, str]]:
    """A `locate` for a source whose data is a folder named by `settings.data.<field>`."""

    def locate(settings: Settings) -> tuple[Path | None, str]:
        d = getattr(settings.data, field)
        if d and Path(d).is_dir():
            return Path(d), ""
        return None, f"no {what}: set MATH2_DATA__{field.upper()}"

    return locate


def start_run(
    session: Session, job: str, key: str, digest: str, params: dict[str, Any]
) -> Run | None:
    """A new run row, or None when this exact import is already done.

    An import that was done with other data at the same pin is a conflict: a new pin is needed.
    A run left `running` (killed half-way) held no committed rows, so it is simply restarted.
    """
    run = session.scalar(select(Run).where(Run.job == job, Run.key == key))
    if run is not None and run.status == "done":
        if run.params.get("digest") != digest:
            raise ImportConflict(
                f"{key} was imported from other data (digest {run.params.get('digest', '?')[:12]}"
                f", now {digest[:12]}); record a new pin in the manifest to import this one"
            )
        return None
    if run is None:
        run = Run(job=job, key=key)
        session.add(run)
    run.status = "running"
    run.params = {**params, "digest": digest}
    session.flush()
    return run


@contextmanager
def import_transaction(
    store: Store, entry: SourceEntry, path: Path, digest: str, **params: Any
) -> Iterator[tuple[Session, Source, Pin, Run]]:
    """The one transaction of an import: its session, the source and pin rows, and the run
    (mark it with `finish_run`). Everything is rolled back if the block raises."""
    with store.session() as s:
        src, pin = source_and_pin(s, entry.name)
        key = f"{entry.name}@{pin.key}"
        run = start_run(s, "import", key, digest, {"path": str(path), **params})
        if run is None:  # finished by another process since `skip_if_done` looked
            raise ImportConflict(f"{key} was imported meanwhile by another run")
        yield s, src, pin, run


def finish_run(run: Run, stats: dict[str, int]) -> None:
    """Mark a run done with its counters."""
    run.status = "done"
    run.stats = stats
    run.finished_at = dt.datetime.now(dt.UTC)


def _uniform(table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row with the same keys (executemany needs that); a missing value takes the
    column's default, or NULL."""
    keys = set().union(*rows)
    fill = {}
    for k in keys:
        default = table.c[k].default
        fill[k] = None if default is None else default.arg  # a callable is called per row
    out = []
    for r in rows:
        if len(r) == len(keys):
            out.append(r)
            continue
        row = dict(r)
        for k in keys - r.keys():
            v = fill[k]
            row[k] = v(None) if callable(v) else v
        out.append(row)
    return out


def insert_mentions(session: Session, rows: list[dict[str, Any]]) -> list[int]:
    """Bulk insert mentions; returns their ids in the order given."""
    if not rows:
        return []
    # Core, not ORM bulk insert: the ORM splits rows by which values are None, and splicing
    # RETURNING rows back together is quadratic in the number of such groups.
    table = Mention.__table__
    result = session.connection().execute(
        insert(table).returning(table.c.id, sort_by_parameter_order=True), _uniform(table, rows)
    )
    return [r[0] for r in result]


def insert_texts(session: Session, rows: Iterable[dict[str, Any]]) -> int:
    """Bulk insert text rows; returns how many."""
    rows = list(rows)
    if rows:
        table = TextRecord.__table__
        session.connection().execute(insert(table), _uniform(table, rows))
    return len(rows)


def mention_row(src: Source, pin: Pin, name: str, **fields: Any) -> dict[str, Any]:
    """A mention row with the provenance every mention carries (source, pin, licence, class,
    authored); `fields` add to it or override it (a per-item licence, say)."""
    row: dict[str, Any] = dict(
        source_id=src.id,
        pin_id=pin.id,
        name=name,
        licence=pin.licence,
        intake_class=pin.intake_class,
        authored=src.authored,
    )
    row.update(fields)
    return row


def text_row(
    mention_id: int,
    src: Source,
    pin: Pin,
    body: str,
    *,
    role: str,
    attribution: str,
    author: str | None,
    licence: str | None = None,
) -> dict[str, Any]:
    """A row of text a person wrote, in the prose zone, with its licence and attribution."""
    return dict(
        mention_id=mention_id,
        role=role,
        body=body,
        zone="prose",
        licence=licence or pin.licence,
        share_alike=pin.intake_class == IntakeClass.OPEN_TEXT_SA.value,
        attribution=attribution,
        author_kind="person",
        author=author,
        source_id=src.id,
        pin_id=pin.id,
    )


def takes_text(pin: Pin) -> bool:
    """Whether the class at this pin lets the source's text into the prose zone."""
    return pin.intake_class in TEXT_CLASSES
