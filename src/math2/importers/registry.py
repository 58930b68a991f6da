"""Which manifest sources have an importer, and how each finds its data on this machine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.sources.manifest import SourceEntry
    from math2.store import Store


class ImportResult(BaseModel):
    """What one import did, for the build summary and the report."""

    source: str
    pin: str
    path: str
    counts: dict[str, int]
    skipped_already_done: bool = False
    notes: list[str] = []


@dataclass(frozen=True)
class ImporterSpec:
    """An importer: finds its input (or says why not) and imports it at the source's pin.

    `fetch` says how `math2 build` gets the source at its pin when this machine has no copy:
    `git` (a shallow fetch of the pinned commit of the manifest's url), `hf` (a Hugging Face
    dataset at the pinned revision, through `datasets`), `web` (a page without versions); None
    when it cannot. `data_field` names the setting a local copy is given by
    (`MATH2_DATA__<FIELD>`)."""

    source: str
    locate: Callable[[Settings], tuple[Path | None, str]]
    run: Callable[[Store, SourceEntry, Path], ImportResult]
    fetch: str | None = None
    data_field: str | None = None


IMPORTERS: dict[str, ImporterSpec] = {}


def register(spec: ImporterSpec) -> ImporterSpec:
    """Add an importer to the registry (one per manifest source); every import it runs is a
    run of `math2.runs` (`math2.importers.runs`)."""
    from math2.importers.runs import on_runs

    recorded = replace(spec, run=on_runs(spec.run))
    IMPORTERS[spec.source] = recorded
    return recorded


def load_builtin_importers() -> dict[str, ImporterSpec]:
    """Import the modules that register math2's own importers."""
    import math2.importers.builtin  # noqa: F401

    return IMPORTERS
