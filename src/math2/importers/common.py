"""What every importer shares: the run record that makes an import happen once per pin, and
bulk writes of mentions and texts that keep their provenance."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import insert, select
from sqlalchemy.orm import Session, object_session

from math2.config import Settings
from math2.errors import InputError, Math2Error
from math2.importers.pin_rows import ImportConflict, clear_pin, reopen_pin
from math2.importers.registry import ImportResult
from math2.importers.runs import JOB, import_identity, mark_step
from math2.runs.lifecycle import find_run, finish_in
from math2.sources.intake import IntakeClass
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import (
    Mention,
    Pin,
    Source,
    TextRecord,
)
from math2.store.work import Run
from math2.util.files import file_digest  # noqa: F401 (importers' name for it)

T = TypeVar("T")
TEXT_CLASSES = {IntakeClass.OPEN_TEXT.value, IntakeClass.OPEN_TEXT_SA.value}
# Set by `replacing()`: the next import replaces what was imported at the pin (`--force`).
_FORCE: contextvars.ContextVar[bool] = contextvars.ContextVar("math2_import_force", default=False)


@contextmanager
def replacing() -> Iterator[None]:
    """Within the block, an import replaces the data already imported at its pin (in the same
    one transaction that writes the new data) instead of refusing other data."""
    token = _FORCE.set(True)
    try:
        yield
    finally:
        _FORCE.reset(token)


def refuse_empty(path: Path, found: int, what: str, source: str) -> None:
    """An import of data with nothing in it is refused before anything is written."""
    if found == 0:
        raise InputError(
            path,
            None,
            f"no {what} in this data (empty or cut short): nothing was imported; give "
            f"`math2 import {source}` the complete data at the manifest's pin",
        )


def source_and_pin(session: Session, name: str) -> tuple[Source, Pin]:
    """The stored source and its current pin (the manifest must have been synced)."""
    src = session.scalar(select(Source).where(Source.name == name))
    if src is None:
        raise Math2Error(f"source {name!r} is not in the store: run `math2 init`")
    pin = session.scalar(select(Pin).where(Pin.source_id == src.id, Pin.is_current.is_(True)))
    if pin is None:
        raise Math2Error(f"source {name!r} has no pin in the manifest; it cannot be imported")
    return src, pin


def already_done(session: Session, source: str, pin_key: str, digest: str) -> bool:
    """Whether this exact import finished before (checked before any parsing work)."""
    run = find_run(session, import_identity(source, pin_key))
    return run is not None and run.status == "done" and run.params.get("digest") == digest


_READ_BY = "; read by "


def read_by(data_digest: str, reader: str) -> str:
    """The digest of an import: its data's digest and the version of the reader that read it
    (a newer reader reads the same data into more: the import is done again, replacing)."""
    return f"{data_digest}{_READ_BY}{reader}"


def recorded_readers(session: Session, source: str) -> set[str]:
    """The readers the done imports of `source` name in their digests (`…; read by X`): which
    versions of its reader wrote what the store holds of it (none recorded: empty)."""
    runs = session.scalars(select(Run).where(Run.job == JOB, Run.key.startswith(f"{source}@")))
    digests = [str((r.params or {}).get("digest", "")) for r in runs if r.status == "done"]
    return {d.split(_READ_BY, 1)[1] for d in digests if _READ_BY in d}


def rereads(session: Session, source: str, pin_key: str, digest: str) -> bool:
    """Whether this import is the data already imported at the pin, read by another version of
    its reader: it then replaces that import, as `--force` does."""
    run = find_run(session, import_identity(source, pin_key))
    if run is None or run.status != "done":
        return False
    old = str(run.params.get("digest", ""))
    return old != digest and old.split(_READ_BY)[0] == digest.split(_READ_BY)[0]


def skip_if_done(store: Store, entry: SourceEntry, path: Path, digest: str) -> ImportResult | None:
    """The "already imported" result when this exact import finished before, else None."""
    if _FORCE.get():
        return None
    with store.session() as s:
        _, pin = source_and_pin(s, entry.name)
        if already_done(s, entry.name, pin.key, digest):
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
    session: Session, source: str, pin_key: str, digest: str, params: dict[str, Any]
) -> Run | None:
    """The import's run row (`math2.runs.lifecycle`'s identity of it), or None when this exact
    import is already done.

    An import that was done with other data at the same pin is a conflict: a new pin is needed.
    A run left `running` (killed half-way) held no committed rows, so it is simply restarted.
    """
    identity = import_identity(source, pin_key)
    key = identity.key
    run = find_run(session, identity)
    if run is not None and run.status == "done":
        if run.params.get("digest") != digest:
            name, _, pin = key.partition("@")
            path = params.get("path", "PATH")
            raise ImportConflict(
                f"{key} was imported from other data (digest {run.params.get('digest', '?')[:12]}"
                f" from {run.params.get('path', '?')}; this data's is {digest[:12]}). If this "
                f"data is the right one for pin {pin}, replace what was imported: `math2 import "
                f"{name} {path} --force`; if it is a newer version, record its pin in the "
                f"manifest and run `math2 bump {name} --to PIN {path}`"
            )
        return None
    if run is None:
        run = Run(job=identity.job, key=key, spec=identity.spec, spec_hash=identity.spec_hash)
        session.add(run)
    run.status = "running"
    run.params = {**params, "digest": digest}
    session.flush()
    return run


@contextmanager
def import_transaction(
    store: Store,
    entry: SourceEntry,
    path: Path,
    digest: str,
    *,
    in_place: bool = False,
    **params: Any,
) -> Iterator[tuple[Session, Source, Pin, Run]]:
    """The one transaction of an import: its session, the source and pin rows, and the run
    (mark it with `finish_run`). Everything is rolled back if the block raises.

    Importing again at the pin (`--force`, or a newer reader) first clears what the pin's
    import wrote; where a person bound one of its mentions that is refused, unless the writer
    diffs against what is active (`in_place`: `lean_write.write_library`, which then reads the
    pin's rows again in place, as a bump does)."""
    with store.session() as s:
        src, pin = source_and_pin(s, entry.name)
        key = f"{entry.name}@{pin.key}"
        if _FORCE.get() or rereads(s, entry.name, pin.key, digest):
            try:
                clear_pin(s, src, pin)
            except ImportConflict as exc:
                if not in_place:
                    raise ImportConflict(
                        f"{key} cannot be imported again in place (digest {digest}): {exc}"
                    ) from None
                reopen_pin(s, src, pin)
        run = start_run(s, entry.name, pin.key, digest, {"path": str(path), **params})
        if run is None:  # finished by another process since `skip_if_done` looked
            raise ImportConflict(f"{key} was imported meanwhile by another run")
        # every importer reads all its data before this transaction: the first step is done
        mark_step(s, run, "read", {"path": str(path), "digest": digest})
        yield s, src, pin, run


Write = Callable[[Session, Source, Pin], dict[str, int]]


def write_import(
    store: Store,
    entry: SourceEntry,
    path: Path,
    digest: str,
    write: Write,
    *,
    notes: Iterable[str] = (),
    **params: Any,
) -> ImportResult:
    """`write(session, source, pin)` in the import's one transaction, its counts recorded as the
    run's (`finish_run`); what the import did."""
    with import_transaction(store, entry, path, digest, **params) as (s, src, pin, run):
        counts = write(s, src, pin)
        finish_run(run, counts)
    return ImportResult(
        source=entry.name, pin=pin.key, path=str(path), counts=counts, notes=list(notes)
    )


def import_once(
    store: Store,
    entry: SourceEntry,
    path: Path,
    digest: str,
    read: Callable[[], T],
    write: Callable[[Session, Source, Pin, T], dict[str, int]],
) -> ImportResult:
    """The shape of an import: nothing when this data is imported at this pin already; else
    `read()` all of it (a malformed file changes nothing), then `write` it in one transaction."""
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    data = read()
    return write_import(store, entry, path, digest, lambda s, src, pin: write(s, src, pin, data))


def files_under(path: Path, pattern: str, what: str) -> list[Path]:
    """The files matching the glob `pattern` (`**/` to look in subfolders) in `path`, in name
    order; InputError naming the folder when there are none."""
    files = sorted(path.glob(pattern))
    if not files:
        raise InputError(path, None, f"no {what}")
    return files


def finish_run(run: Run, stats: dict[str, int]) -> None:
    """Mark an import's run done with its counters (and its `write` step, in the same
    transaction: `math2.runs.lifecycle.finish_in`)."""
    session = object_session(run)
    if session is None:
        raise ValueError("an import's run is finished inside its transaction")
    session.flush()
    finish_in(session, run.id, dict(stats))
    mark_step(session, run, "write", dict(stats))


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


def insert_prose(
    session: Session,
    src: Source,
    pin: Pin,
    role: str,
    texts: Iterable[tuple[int, str, str, str | None]],
) -> int:
    """Text a person wrote, as (mention id, body, attribution, author), in the prose zone when
    the class at this pin takes the source's text (`takes_text`); how many rows."""
    if not takes_text(pin):
        return 0
    return insert_texts(
        session,
        (
            text_row(mid, src, pin, body, role=role, attribution=attribution, author=author)
            for mid, body, attribution, author in texts
        ),
    )


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
