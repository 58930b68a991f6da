"""Mathlib (and any Lean 4 library) into the corpus at its pin (K6.4, K6.10): where the data
is, which route reads it, and the checkout's commit.

Two routes: the lean_scout datasets (a mention per constant with allowCompletion = true), or a
source scan of a checkout where none are published. Both read everything before any write;
`math2.importers.lean_write` writes what they read (a first import, or a bump at a later pin).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

from math2.config import Settings
from math2.errors import InputError
from math2.importers import lean_scout
from math2.importers.common import file_digest, read_by, refuse_empty, skip_if_done
from math2.importers.instance_names import name_instances
from math2.importers.lean_source import READER, Declaration, SourceFile, lean_files, scan_file
from math2.importers.lean_write import DeclRecord, LibraryData, write_library
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.importers.to_additive import additive_twins
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.util.progress import stage, track


def read_checkout(root: Path, folder: str = "Mathlib") -> LibraryData:
    """Scan a Lean checkout (its `folder`, `Mathlib/`, when there is one); every file before
    any write."""
    base = root / folder if (root / folder).is_dir() else root
    records: dict[str, DeclRecord] = {}
    dup = anon = files = 0
    kinds: Counter[str] = Counter()
    main_named: set[str] = set()
    stacks = 0
    scanned_files: list[SourceFile] = []  # `@[to_additive]` twins come after the scan
    twins = 0

    def scanned() -> Iterator[Declaration]:
        nonlocal files
        for path in track(list(lean_files(base)), f"scan {base.name}", unit="files"):
            f = scan_file(root, path)
            files += 1
            main_named.update(f.main_results)
            scanned_files.append(f)
        # Lean's rule needs every file's classes and names, the additive twins' too
        with stage("instance names and @[to_additive] twins"):
            twins_named = (d.name for d in additive_twins(scanned_files) if d.name)
            name_instances(scanned_files, twins_named)
        for f in scanned_files:
            yield from f.declarations

    def generated() -> Iterator[Declaration]:
        nonlocal twins
        for d in additive_twins(scanned_files):
            kept = records.get(d.name)
            # a declaration written in source wins, unless only a private one has the name
            if kept is None or (not kept.allow_completion and not d.private):
                twins += 1
                yield d

    for d in chain(scanned(), generated()):
        if d.twin_of is None:
            kinds[d.kind] += 1
        if d.name is None:
            anon += 1
            continue
        kept = records.get(d.name)
        if kept is not None:
            dup += 1  # the one not kept is the duplicate
            # Lean lets a private `X.foo` (a mangled name) and a public `X.foo` of another
            # file stand together: the public one is the library's, whichever file came first
            if kept.allow_completion or d.private:
                continue
            stacks -= bool(kept.extra["stacks"])
        stacks += bool(d.stacks)
        records[d.name] = DeclRecord(
            name=d.name,
            kind=d.kind,
            module=d.module,
            statement=d.statement or None,
            docstring=d.docstring,
            allow_completion=not d.private,
            # A source statement is not an elaborated type: its hash lives in `extra`, so
            # that the type-hash clustering (same type, same statement) never sees it.
            type_hash=None,
            extra={
                "statement_hash": d.statement_hash if d.statement else None,
                "line": d.line,
                "attributes": d.attributes[:8],
                # `scoped`, `protected`, …: the library tables read scoped instances from here
                **({"modifiers": d.modifiers} if d.modifiers else {}),
                "stacks": d.stacks,
                **({"deprecated_since": d.deprecated_since} if d.deprecated_since else {}),
                # a generated twin's statement is a textual translation (importers/to_additive)
                **({"to_additive_of": d.twin_of} if d.twin_of else {}),
                **({"alias_direction": d.alias_direction} if d.alias_direction else {}),
                # what a definition says, for the search index only (never node text)
                **({"body": d.body} if d.body else {}),
            },
            successor=d.successor,
            deprecated=d.deprecated_since is not None,
        )
    # Module docs name main results by short or full name; keep those that resolve.
    by_short: dict[str, list[str]] = {}
    for name in records:
        by_short.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    main = 0
    for n in main_named:
        for full in [n] if n in records else by_short.get(n, [])[:1]:
            if records[full].kind in ("theorem", "lemma"):
                records[full].extra["main_result"] = True
                main += 1
    counts = {
        "files": files,
        "declarations": sum(kinds.values()),
        "named, unique": len(records),
        "anonymous (instances, examples)": anon,
        "duplicate names": dup,
        "additive twins (@[to_additive])": twins,
        "with docstring": sum(1 for r in records.values() if r.docstring),
        "deprecated": sum(1 for r in records.values() if r.deprecated),
        "with @[stacks] tags": stacks,
        "module-doc main results": main,
        **{f"kind {k}": v for k, v in kinds.most_common()},
    }
    notations = [(f.module, n) for f in scanned_files for n in f.notations]
    return LibraryData(list(records.values()), counts, [], "source scan", notations)


def _dataset(root: Path, *names: str) -> Path | None:
    for n in names:
        if (root / n).exists():
            return root / n
    return None


def read_lean_scout(root: Path) -> LibraryData:
    """mathlib-types (+ const_dep, + tactics when present) from a folder holding them."""
    types = _dataset(root, "mathlib-types", "types")
    if types is None:
        raise InputError(root, None, "no mathlib-types (or types/) dataset folder")
    deps_dir = _dataset(root, "mathlib-const-dep", "const_dep", "const-dep")
    tactics_dir = _dataset(root, "mathlib-tactics", "tactics")
    all_constants = completable = named_in_lib = 0
    has_flag = True
    records: list[DeclRecord] = []
    for row in lean_scout.read_types(types):
        all_constants += 1
        if row.allow_completion is None:
            has_flag = False
        if row.allow_completion is False:
            continue
        completable += 1
        if (row.module or "").startswith("Mathlib"):
            named_in_lib += 1
        records.append(
            DeclRecord(
                name=row.name,
                kind=None,
                module=row.module,
                statement=row.type,
                docstring=row.docstring,
                allow_completion=True,
                type_hash=row.type_hash,
            )
        )
    counts = {
        "all constants (every row of mathlib-types)": all_constants,
        "constants a user can complete (allowCompletion = true; the mentions)": completable,
        "named theorems and definitions (completable, in Mathlib's own modules)": named_in_lib,
        "with docstring": sum(1 for r in records if r.docstring),
    }
    notes = (
        []
        if has_flag
        else ["older types schema without allowCompletion: every constant taken as a mention"]
    )
    if deps_dir is not None:
        deps = dict(lean_scout.read_const_dep(deps_dir))
        for r in records:
            r.deps = deps.get(r.name)
        counts["with const_dep"] = sum(1 for r in records if r.deps is not None)
    if tactics_dir is not None:
        counts["tactic invocations (mathlib-tactics)"] = sum(
            1 for _ in lean_scout.read_tactics(tactics_dir)
        )
    return LibraryData(records, counts, notes, "lean_scout", lean_flag=has_flag)


def import_lean_library(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """A lean_scout folder or a Lean checkout, whichever `path` is."""
    is_scout = _dataset(path, "mathlib-types", "types") is not None
    digest = file_digest(path) if is_scout else read_by(_tree_digest(path), READER)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    if not is_scout:
        check_commit(path, entry)
    data = read_lean_scout(path) if is_scout else read_checkout(path)
    refuse_empty(path, len(data.records), "declarations", entry.name)
    return write_library(store, entry, data, digest, path)


def check_commit(root: Path, entry: SourceEntry) -> None:
    """A git checkout must be at the manifest's pinned commit (checked before any parsing)."""
    from math2.importers.fetch import head_commit

    pin = entry.current_pin
    want = pin.commit if pin else None
    have = head_commit(root)
    if want and have and not have.startswith(want):
        raise InputError(
            root,
            None,
            f"this checkout is at commit {have[:12]}, the manifest pins {entry.name} at "
            f"{want[:12]}: check that commit out (`git -C {root} checkout {want}`), or record "
            "the new pin in the manifest and run `math2 bump`",
        )


def _tree_digest(root: Path) -> str:
    """A cheap digest of a checkout: its git HEAD when it has one, else every file's content."""
    head = root / ".git" / "HEAD"
    if head.is_file():
        ref = head.read_text().strip()
        if ref.startswith("ref: "):
            target = root / ".git" / ref[5:]
            if target.is_file():
                return target.read_text().strip()
        return ref
    return file_digest(root / "Mathlib" if (root / "Mathlib").is_dir() else root)


def locate(settings: Settings) -> tuple[Path | None, str]:
    """lean_scout data first (the manifest's route), else a Mathlib checkout to scan."""
    for d in (settings.data.lean_scout_dir, settings.data.mathlib_dir):
        if d and Path(d).is_dir():
            return Path(d), ""
    return None, (
        "no lean_scout data or Mathlib checkout: set MATH2_DATA__LEAN_SCOUT_DIR or "
        "MATH2_DATA__MATHLIB_DIR"
    )


register(
    ImporterSpec("mathlib", locate, import_lean_library, fetch="git", data_field="mathlib_dir")
)
