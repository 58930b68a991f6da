"""The AI-written informal datasets (K6.4): Herald's statements and FrenzyMath's
mathlib_informal, read at their pinned revision (a Hugging Face dataset that `math2 build`
fetches through `datasets`, or a local parquet/JSONL file or folder) and joined to the pinned
Mathlib by name.

Each text a dataset gives a declaration becomes a `SearchAid` row of that Mathlib mention:
a search aid (`math2.retrieval.aids` indexes it with the other aids) and an input to the
clustering, **never** text of a node, a declaration's statement or docstring, and never shown
as one. The model that wrote it is the one the dataset's card names (the manifest's `model`),
else `unknown` (X08).

The join: a dataset's name (Herald: the declared name of its `formal_statement`, read by the Lean
lexer; mathlib_informal: its `name` parts) is looked up among the active declarations of
Mathlib at its current pin — as written, else as the one declaration whose name ends with
`.NAME`. A name the pin does not have (renamed or removed since the dataset's Lean version, or
not read) gets no aid: it is counted, and the first ones are listed in the import's notes; a
deprecated alias the pin still has is a declaration of the pin and is joined like any other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from math2.errors import InputError
from math2.importers.common import refuse_empty, skip_if_done, write_import
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Mention, Pin, SearchAid, Source
from math2.util.files import file_digest

if TYPE_CHECKING:
    from math2.config import Settings

UNKNOWN_MODEL = "unknown"
LIBRARY = "mathlib"


@dataclass(frozen=True)
class DatasetSpec:
    """Which fields of a row hold the name and the texts."""

    name_field: str  # "name" (parts or a string) or "formal_statement" (Lean code)
    text_fields: tuple[str, ...]
    data_field: str  # the setting that names a local copy


DATASETS = {
    "herald": DatasetSpec("formal_statement", ("informal_statement",), "herald_dir"),
    "frenzymath-mathlib-informal": DatasetSpec(
        "name", ("informal_name", "informal_description"), "frenzymath_mathlib_informal_dir"
    ),
}


def declared_name(code: str) -> str | None:
    """The name the first declaration of Lean code declares (`theorem Nat.foo …` → `Nat.foo`),
    read by math2's Lean lexer; None when there is none or the code does not lex."""
    from math2.lean.commands import split_commands
    from math2.lean.lexer import LexError, Tok, tokenize
    from math2.lean.rules import DEFINITION_KEYWORDS, THEOREM_KEYWORDS

    try:
        commands = split_commands(tokenize(code))
    except LexError:
        return None
    for c in commands:
        if c.keyword in THEOREM_KEYWORDS | DEFINITION_KEYWORDS and c.body:
            if c.body[0].kind is Tok.IDENT:
                return c.body[0].text.replace("«", "").replace("»", "").removeprefix("_root_.")
            return None
    return None


def _name(row: dict[str, Any], spec: DatasetSpec) -> str | None:
    value = row.get(spec.name_field)
    if spec.name_field == "formal_statement":
        return declared_name(str(value)) if value else None
    if isinstance(value, list | tuple):
        return ".".join(str(p) for p in value) or None
    return str(value) if value else None


@dataclass
class _Rows:
    """A dataset read in full: (name, field, text, row id) per text, and what could not be."""

    texts: list[tuple[str, str, str, str]]
    rows: int = 0
    unnamed: int = 0


def read_dataset(path: Path, spec: DatasetSpec) -> _Rows:
    """Every row of the parquet/JSONL/CSV files at `path` (a file or a folder)."""
    from math2.importers.matching import read_rows

    out = _Rows(texts=[])
    for line, row in read_rows(path):
        out.rows += 1
        name = _name(row, spec)
        if name is None:
            out.unnamed += 1
            continue
        rid = str(row.get("id", f"{Path(row['__file']).name}:{line}"))
        for field in spec.text_fields:
            text = row.get(field)
            if isinstance(text, str) and text.strip():
                out.texts.append((name, field, text.strip(), rid))
    return out


class _Names:
    """The active declarations of Mathlib at its current pin, by name and by last part."""

    def __init__(self, session: Session):
        src = session.scalar(select(Source).where(Source.name == LIBRARY))
        rows = (
            session.execute(
                select(Mention.name, Mention.id).where(
                    Mention.source_id == src.id, Mention.status == "active"
                )
            ).all()
            if src is not None
            else []
        )
        self.ids = {n: i for n, i in rows}
        self.by_last: dict[str, list[str]] = defaultdict(list)
        for n in self.ids:
            self.by_last[n.rsplit(".", 1)[-1]].append(n)
        self.pin = (
            session.scalar(select(Pin.key).where(Pin.source_id == src.id, Pin.is_current))
            if src is not None
            else None
        )

    def resolve(self, written: str) -> tuple[int | None, str]:
        """(mention id, how): `exact`, `suffix` (the one name ending in `.written`), or
        None with `absent`."""
        if written in self.ids:
            return self.ids[written], "exact"
        last = written.rsplit(".", 1)[-1]
        cands = [n for n in self.by_last.get(last, ()) if n.endswith("." + written)]
        if len(cands) == 1:
            return self.ids[cands[0]], "suffix"
        return None, "absent"


def import_dataset(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """One AI-written dataset's texts as search aids of the Mathlib declarations they name."""
    spec = DATASETS[entry.name]
    digest = file_digest(path)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    read = read_dataset(path, spec)
    refuse_empty(path, len(read.texts), "named rows with text", entry.name)
    model = entry.model or UNKNOWN_MODEL
    notes: list[str] = []

    def write(s: Session, src: Source, pin: Pin) -> dict[str, int]:
        names = _Names(s)
        if not names.ids:
            raise InputError(
                path,
                None,
                f"Mathlib has no declarations in the store: its aids are joined to them by name"
                f" (`math2 import {LIBRARY}` first)",
            )
        rows, how = [], defaultdict(set)
        absent: list[str] = []
        for name, field, text, rid in read.texts:
            mid, via = names.resolve(name)
            how[via].add(name)
            if mid is None:
                if len(absent) < 5 and name not in absent:
                    absent.append(name)
                continue
            extra = {"row": rid} | ({"written": name} if via == "suffix" else {})
            rows.append(
                dict(
                    source_id=src.id,
                    pin_id=pin.id,
                    mention_id=mid,
                    kind=field,
                    body=text,
                    model=model,
                    extra=extra,
                )
            )
        for i in range(0, len(rows), 5000):
            s.execute(insert(SearchAid), rows[i : i + 5000])
        covered = len({r["mention_id"] for r in rows})
        completable = _completable(s)
        notes.append(
            f"joined to {LIBRARY}@{names.pin}: {covered} of its {completable} completable "
            f"declarations have an aid ({covered / completable:.1%}); model: {model}"
            if completable
            else f"joined to {LIBRARY}@{names.pin}; model: {model}"
        )
        if absent:
            notes.append(f"names not at the pin (no aid), e.g. {', '.join(absent)}")
        return {
            "rows": read.rows,
            "rows without a readable name": read.unnamed,
            "names joined as written": len(how["exact"]),
            "names joined by a unique suffix": len(how["suffix"]),
            "names not at the pin (no aid)": len(how["absent"] - how["exact"] - how["suffix"]),
            "aids written": len(rows),
            "declarations with an aid": covered,
            "completable declarations at the pin": completable,
        }

    return write_import(store, entry, path, digest, write, notes=notes, model=model)


def _completable(s: Session) -> int:
    from sqlalchemy import func

    src = s.scalar(select(Source.id).where(Source.name == LIBRARY))
    return (
        s.scalar(
            select(func.count())
            .select_from(Mention)
            .where(
                Mention.source_id == src,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
        )
        or 0
    )


def _locator(field: str, what: str) -> Callable[[Settings], tuple[Path | None, str]]:
    def locate(settings: Settings) -> tuple[Path | None, str]:
        p = getattr(settings.data, field)
        if p and Path(p).exists():
            return Path(p), ""
        return None, f"no {what}: set MATH2_DATA__{field.upper()} (a parquet or JSONL copy)"

    return locate


for _name_, _spec in DATASETS.items():
    register(
        ImporterSpec(
            _name_,
            _locator(_spec.data_field, f"copy of {_name_}"),
            import_dataset,
            fetch="hf",
            data_field=_spec.data_field,
        )
    )
