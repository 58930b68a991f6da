"""Batteries (the Lean community's standard library extension Mathlib builds on) at its pin: its
classes and names join the library's tables (`math2.lean.library`: a statement names
`Nat.sqrt`, `List.Chain` or a class of Batteries as readily as one of Mathlib's). The pin is
the one Mathlib's `lake-manifest.json` gives at Mathlib's pin; a checkout is commit-checked
like Mathlib's, and read by the same source scan (`math2.importers.mathlib.read_checkout`, its
`Batteries/` folder) into `lean4` mentions."""

from __future__ import annotations

from pathlib import Path

from math2.config import Settings
from math2.importers.common import read_by, refuse_empty, skip_if_done
from math2.importers.lean_source import READER
from math2.importers.lean_write import write_library
from math2.importers.mathlib import _tree_digest, check_commit, read_checkout
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "batteries"


def import_batteries(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """A Batteries checkout at the manifest's pin (its `Batteries/` folder)."""
    digest = read_by(_tree_digest(path), READER)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    check_commit(path, entry)
    data = read_checkout(path, folder="Batteries")
    refuse_empty(path, len(data.records), "declarations", entry.name)
    return write_library(store, entry, data, digest, path)


def locate(settings: Settings) -> tuple[Path | None, str]:
    """No local copy is configured: `math2 build` fetches the pinned commit."""
    url = settings.data.urls.get(SOURCE)
    return None, f"no local Batteries checkout (fetched at its pin from {url or 'its url'})"


register(ImporterSpec(SOURCE, locate, import_batteries, fetch="git"))
