"""What the importers of the other systems share (K6.6: Rocq, HOL Light, HOL4, Naproche,
NASALib, ACL2): a source checkout read at its pin without the system's own toolchain, one
mention per declaration, no comment taken as text.

Each system's module gives a `SystemReader`: which files to read and a `parse` that turns one
file's text into `Decl`s (names as the system writes them, the file or theory they sit in, the
statement read from the code view, comments blanked). `import_checkout` then

1. refuses a git checkout that is not at the manifest's pin (before anything is parsed) and
   records the commit it read;
2. reads every file, and for a library with a licence per item (NASALib per library, ACL2 per
   file; K6.3) the item's licence: the class of each mention follows its own licence, an item
   whose licence statement math2 cannot read (or, for ACL2, that states none) is not imported
   and is counted;
3. writes the mentions in one transaction (`common.write_import`), each with the source's
   `authored` copied to it (K6.5), and says what it read: files (and how many gave no
   declaration), declarations by kind (after de-duplication), licences seen, the commit, and
   every form a reader saw and did not read, counted and named (`not read: Triviality`, with a
   first place in the notes): a reader's `parse` returns a `Parsed` (its `Decl`s and its
   `Unread` forms), or a plain list of `Decl`s when it has nothing to declare unread.

Crosswalks need nothing more here: the clustering pass links an edge of a list (the 1000+
list's `hol_light`, `rocq` blocks) to the mention of the same system with the same name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from math2.errors import InputError
from math2.importers.common import (
    dir_locator,
    insert_mentions,
    mention_row,
    refuse_empty,
    skip_if_done,
    write_import,
)
from math2.importers.registry import ImporterSpec, ImportResult
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Pin, Source
from math2.util.files import file_digest

# A statement is formal text of the mention; it is cut at this many characters (as Mizar's).
STATEMENT_CHARS = 2000
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Decl:
    """One declaration of a library, as its source file states it."""

    name: str  # as the system writes it: the target a crosswalk names
    kind: str  # theorem, lemma, definition, axiom, theory, …
    module: str  # the file, theory or library it sits in
    line: int
    statement: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Unread:
    """A form a reader saw in a file and did not import: what it is, as the source writes it
    (`Triviality`, `environment outside ForTheL`), and the line where it stands."""

    form: str
    line: int


@dataclass(slots=True)
class Parsed:
    """What a reader made of one file: the declarations it imports and the forms it saw and
    did not read."""

    decls: list[Decl]
    unread: list[Unread] = field(default_factory=list)


@dataclass(slots=True)
class ItemLicence:
    """The licence a file (or its library) states: an SPDX id, or None with why."""

    spdx: str | None  # None with source "default": the pin's licence
    statement: str | None = None  # the words it was read from (a fact, not stored as text)
    source: str = "stated"  # stated | default | none stated | unrecognised


@dataclass(frozen=True)
class SystemReader:
    """How one system's checkout is read."""

    source: str
    what: str  # "Rocq .v files under theories/", for errors and notes
    files: Callable[[Path], list[Path]]
    # (root, file, text) -> the declarations (and, in a `Parsed`, the forms not read)
    parse: Callable[[Path, Path, str], list[Decl] | Parsed]
    # per-item licence (K6.3): (root, file, text) -> the item's licence; None: the pin's
    licence: Callable[[Path, Path, str], ItemLicence] | None = None


def clean_statement(text: str) -> str | None:
    """A statement as one line of code, cut at `STATEMENT_CHARS`; None when empty."""
    text = _WS.sub(" ", text).strip()
    return text[:STATEMENT_CHARS] or None


def checkout_commit(root: Path, entry: SourceEntry) -> str | None:
    """The commit a git checkout is at, refused when it is not the manifest's pin; None for a
    folder that is not a git checkout (its files' digest then identifies what was read)."""
    from math2.importers.fetch import head_commit
    from math2.importers.mathlib import check_commit

    check_commit(root, entry)
    return head_commit(root)


# Licence statements as books and libraries write them (the first match decides).
_STATEMENTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"3-clause BSD|BSD[- ]3[- ]clause|BSD-3-Clause", re.I), "BSD-3-Clause"),
    (re.compile(r"2-clause BSD|BSD[- ]2[- ]clause|BSD-2-Clause", re.I), "BSD-2-Clause"),
    (re.compile(r"MIT/X11|\bMIT\b[- ]?(style )?licen[cs]e", re.I), "MIT"),
    (re.compile(r"\bCC0\b|publicdomain/zero", re.I), "CC0-1.0"),
    (re.compile(r"Apache License,? Version 2\.0|Apache-2\.0", re.I), "Apache-2.0"),
    (re.compile(r"NASA Open Source Agreement|NOSA", re.I), "NASA-1.3"),
]
_GNU = re.compile(r"GNU (Lesser |Library )?(Affero )?General Public Licen[cs]e", re.I)
_GNU_VERSION = re.compile(r"version\s+(\d)(?:\.\d)?", re.I)
_LATER = re.compile(r"any later|or later|\(at your option\)", re.I)


def licence_of_statement(words: str) -> str | None:
    """The SPDX id a licence statement names, or None when math2 cannot tell."""
    if m := _GNU.search(words):
        v = _GNU_VERSION.search(words, m.start())
        if v is None:
            return None
        kind = "LGPL" if m.group(1) else ("AGPL" if m.group(2) else "GPL")
        version = f"{v.group(1)}.{'1' if kind == 'LGPL' and v.group(1) == '2' else '0'}"
        return f"{kind}-{version}-{'or-later' if _LATER.search(words) else 'only'}"
    for pattern, spdx in _STATEMENTS:
        if pattern.search(words):
            return spdx
    return None


@dataclass
class _Read:
    """Everything read from a checkout, before anything is written."""

    decls: list[tuple[Decl, ItemLicence | None]] = field(default_factory=list)
    files: int = 0
    not_utf8: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # why items were not imported
    skipped_examples: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    unreadable: list[str] = field(default_factory=list)  # file:line: why (lexing failed)
    no_declaration: list[str] = field(default_factory=list)  # files read that gave none
    unread: Counter[str] = field(default_factory=Counter)  # form -> times seen, not read
    unread_at: dict[str, str] = field(default_factory=dict)  # form -> its first file:line

    def counts(self) -> dict[str, int]:
        """What was read and what was not, as the import's counts (kinds after de-duplication)."""
        counts: dict[str, int] = {"files read": self.files, "declarations": len(self.decls)}
        if self.no_declaration:
            counts["files with no declaration"] = len(self.no_declaration)
        for kind, n in sorted(Counter(d.kind for d, _ in self.decls).items()):
            counts[f"kind {kind}"] = n
        for form, n in sorted(self.unread.items()):
            counts[f"not read: {form}"] = n
        for why, n in sorted(self.skipped.items()):
            counts[f"not imported ({why})"] = n
        if self.duplicates:
            counts["names bound again (kept once)"] = self.duplicates
        if self.not_utf8:
            counts["files not UTF-8"] = len(self.not_utf8)
        if self.unreadable:
            counts["files not read (lexing failed)"] = len(self.unreadable)
        return counts

    def notes(self) -> list[str]:
        """Where each form not read first stands, and the files that gave no declaration."""
        notes = [
            f"not read: {form} {n}, e.g. {self.unread_at[form]}"
            for form, n in sorted(self.unread.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        if self.no_declaration:
            shown = ", ".join(self.no_declaration[:5])
            more = len(self.no_declaration) - 5
            notes.append(
                f"files with no declaration ({len(self.no_declaration)}): {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        return notes


def _read(root: Path, reader: SystemReader, files: list[Path]) -> _Read:
    from math2.importers.masking import read_source

    out = _Read()
    seen: dict[str, Decl] = {}
    for path in files:
        text, utf8 = read_source(path)
        try:
            parsed = reader.parse(root, path, text)
        except InputError as exc:  # one file the lexer cannot read does not stop the others
            out.unreadable.append(str(exc).replace(f"{root}/", ""))
            continue
        if isinstance(parsed, list):
            parsed = Parsed(parsed)
        decls, rel = parsed.decls, path.relative_to(root).as_posix()
        out.files += 1
        if not utf8:
            out.not_utf8.append(rel)
        if not decls:
            out.no_declaration.append(rel)
        for u in parsed.unread:
            out.unread[u.form] += 1
            out.unread_at.setdefault(u.form, f"{rel}:{u.line}")
        lic = reader.licence(root, path, text) if reader.licence else None
        if lic is not None and lic.spdx is None and lic.source != "default":
            why = f"licence {lic.source}"
            out.skipped[why] += len(decls)
            out.skipped_examples.setdefault(
                why, f"{path.relative_to(root)}: {lic.statement or 'no licence statement'}"
            )
            continue
        for d in decls:
            first = seen.get(d.name)
            if first is not None:  # a name bound again (a later file, a reload): kept once
                out.duplicates += 1
                first.extra.setdefault("also_at", []).append(f"{d.module}:{d.line}")
                continue
            seen[d.name] = d
            out.decls.append((d, lic))
    return out


def import_checkout(
    store: Store, entry: SourceEntry, path: Path, reader: SystemReader
) -> ImportResult:
    """Every declaration of the checkout at `path`, at the source's pin (see the module doc)."""
    if not path.is_dir():
        raise InputError(path, None, f"not a folder: give a checkout with {reader.what}")
    commit = checkout_commit(path, entry)  # refused before anything is parsed
    files = reader.files(path)
    refuse_empty(path, len(files), reader.what, entry.name)
    digest = f"git:{commit}" if commit else _files_digest(path, files)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    read = _read(path, reader, files)
    refuse_empty(path, len(read.decls), "declarations", entry.name)

    def write(s: Session, src: Source, pin: Pin) -> dict[str, int]:
        rows = []
        licences: Counter[str] = Counter()
        classes: dict[str, str] = {}  # licence -> its intake class, decided once per licence
        for d, lic in read.decls:
            fields: dict[str, Any] = {}
            if lic is not None:  # a licence of its own: its own class (K6.3)
                spdx = lic.spdx or pin.licence
                if spdx not in classes:
                    classes[spdx] = entry.decide(item_licence=spdx).intake.value
                fields = dict(licence=spdx, intake_class=classes[spdx])
                d.extra["licence_source"] = lic.source
            licences[fields.get("licence", pin.licence)] += 1
            rows.append(
                mention_row(
                    src,
                    pin,
                    d.name,
                    kind=d.kind,
                    module=d.module,
                    statement=d.statement,
                    extra={"line": d.line, **d.extra},
                    **fields,
                )
            )
        insert_mentions(s, rows)
        counts = read.counts()
        for lic_id, n in sorted(licences.items()):
            counts[f"licence {lic_id}"] = n
        return counts

    notes = [
        f"read {read.files} files ({reader.what}) at "
        + (f"commit {commit}" if commit else "no git commit (not a git checkout)")
    ]
    notes += [f"not imported ({why}), e.g. {ex}" for why, ex in read.skipped_examples.items()]
    notes += read.notes()
    if read.unreadable:
        notes.append(f"not read ({len(read.unreadable)}): " + "; ".join(read.unreadable[:5]))
    if read.not_utf8:
        notes.append(f"not UTF-8 (read with U+FFFD): {', '.join(read.not_utf8[:5])}")
    return write_import(
        store, entry, path, digest, write, notes=notes, commit=commit, files=read.files
    )


def _files_digest(root: Path, files: list[Path]) -> str:
    """A digest of the files read (a folder that is not a git checkout)."""
    import hashlib

    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode())
        h.update(file_digest(f).encode())
    return h.hexdigest()


def glob_files(*patterns: str, under: str = "") -> Callable[[Path], list[Path]]:
    """A `files` for a reader: the files matching any pattern under `root/under` (or `root`
    when that folder is absent), in name order, hidden folders left out."""

    def files(root: Path) -> list[Path]:
        base = root / under if under and (root / under).is_dir() else root
        found = {p for pat in patterns for p in base.glob(pat) if p.is_file()}
        return sorted(
            p for p in found if not any(part.startswith(".") for part in p.relative_to(root).parts)
        )

    return files


def git_checkout(
    source: str, field: str, what: str, run: Callable[[Store, SourceEntry, Path], ImportResult]
) -> ImporterSpec:
    """The spec of an importer of a git checkout: found at `MATH2_DATA__<FIELD>`, else fetched
    by `math2 build` at the pinned commit."""
    return ImporterSpec(source, dir_locator(field, what), run, fetch="git", data_field=field)
