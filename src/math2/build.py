"""`math2 build`: import every source this machine has, then report what it skipped and why."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from math2.config import Settings
from math2.errors import InputError
from math2.importers.registry import ImporterSpec, ImportResult, load_builtin_importers
from math2.sources import IntakeClass, Manifest, SourceEntry, load_manifest, sync_manifest
from math2.store import Store

log = logging.getLogger(__name__)

# Classes under which nothing of a source is imported into the corpus.
NOT_IMPORTED = {
    IntakeClass.REFUSED: "refused (red flag) until a person records an override",
    IntakeClass.EXCLUDE: "excluded by its licence or kind",
    IntakeClass.LINK: "linked only (no usable licence)",
    IntakeClass.REFERENCE: "copy-check reference only, not a source",
    IntakeClass.EVALUATE: "evaluation only: read by the evaluation harness, never imported",
}


class SourceOutcome(BaseModel):
    """What the build did with one source."""

    source: str
    status: str  # imported | skipped | failed
    reason: str
    result: ImportResult | None = None


class BuildSummary(BaseModel):
    """All outcomes of one build."""

    outcomes: list[SourceOutcome]
    steps: list[tuple[str, str]]


def _class_skip(entry: SourceEntry) -> SourceOutcome | None:
    """A skip when the source's class lets nothing in."""
    decision = entry.decide()
    if decision.intake not in NOT_IMPORTED:
        return None
    return SourceOutcome(
        source=entry.name,
        status="skipped",
        reason=f"class {decision.intake.value}: {NOT_IMPORTED[decision.intake]}",
    )


def _build_skip(entry: SourceEntry, importers: dict[str, ImporterSpec]) -> SourceOutcome | None:
    """A skip when math2 has no importer for the source, or the manifest gives it no pin."""
    if entry.name not in importers:
        reason = f"no importer in this version for its route ({entry.route})"
    elif entry.current_pin is None:
        reason = f"unpinned: {entry.unpinned_reason}"
    else:
        return None
    return SourceOutcome(source=entry.name, status="skipped", reason=reason)


def _run_importer(
    settings: Settings, store: Store, entry: SourceEntry, spec: ImporterSpec, path: Path | None
) -> SourceOutcome:
    """Run one importer on `path`, or wherever it looks; a skip when its data is not here."""
    if path is None:
        path, why = spec.locate(settings)
        if path is None:
            return SourceOutcome(source=entry.name, status="skipped", reason=why)
    result = spec.run(store, entry, Path(path))
    reason = "already imported at this pin" if result.skipped_already_done else f"from {path}"
    return SourceOutcome(source=entry.name, status="imported", reason=reason, result=result)


def import_one(
    settings: Settings, store: Store, name: str, path: Path | None = None
) -> SourceOutcome:
    """Sync the manifest and import one source (from `path`, or wherever its importer looks)."""
    manifest = load_manifest(settings.manifest)
    entry = manifest.get(name)
    with store.session() as s:
        sync_manifest(s, manifest)
    importers = load_builtin_importers()
    if name not in importers:
        raise KeyError(f"no importer for {name!r} (importers: {', '.join(sorted(importers))})")
    if (skip := _class_skip(entry)) is not None:
        return skip
    if path is not None and not Path(path).exists():
        raise InputError(path, None, "no such file or directory")
    return _run_importer(settings, store, entry, importers[name], path)


def _index_step(settings: Settings, store: Store) -> str:
    from math2.retrieval.index import build_index

    out = Path(settings.retrieval.index_dir) / "mathlib"
    try:
        meta = build_index(store, out, "mathlib", dense=settings.retrieval.dense_in_build)
    except LookupError as exc:
        return f"skipped: {exc}"
    dense = (
        f"dense embeddings in {meta['dense_chunks']} chunks"
        if meta["dense_chunks"]
        else "dense embeddings not built (math2 index build --dense; about an hour on 2 cores)"
    )
    return f"BM25 + PageRank prior over {meta['count']} declarations at {out}; {dense}"


def build(
    settings: Settings,
    store: Store,
    manifest: Manifest | None = None,
    on_outcome: Callable[[SourceOutcome], None] | None = None,
) -> BuildSummary:
    """Sync the manifest, run every importer whose data is here, and run the later steps."""
    manifest = manifest or load_manifest(settings.manifest)
    with store.session() as s:
        sync_manifest(s, manifest)
    importers = load_builtin_importers()
    outcomes: list[SourceOutcome] = []
    for entry in manifest.sources:
        outcome = _class_skip(entry) or _build_skip(entry, importers)
        if outcome is None:
            try:
                outcome = _run_importer(settings, store, entry, importers[entry.name], None)
            except Exception as exc:  # one source's failure must not stop the others
                log.debug("import of %s failed", entry.name, exc_info=True)
                outcome = SourceOutcome(source=entry.name, status="failed", reason=str(exc))
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    from math2.crosswalk.cluster import cluster
    from math2.crosswalk.select import select_nodes

    with store.session() as s:
        rep = cluster(s)
        sel = select_nodes(s, "mathlib", settings.select.requests)
    steps = [
        (
            "crosswalks + clustering (K6.7)",
            f"{rep.edges_linked} edges linked to imported declarations, "
            f"{rep.mentions_joined} mentions joined nodes, {rep.type_hash_joined} by type hash, "
            f"{rep.nodes_merged} nodes merged by Wikidata id, {rep.conflicts} conflicts left",
        ),
        (
            "node selection (K6.4)",
            f"{sel.total} Mathlib declarations selected: {sel.human_mention} by a human mention,"
            f" {sel.theorem_lists} by the theorem lists, {sel.module_doc_main_results} as "
            f"module-doc main results, {sel.requested_or_bound} requested or bound, "
            f"{sel.statement_definitions} as definitions in selected statements",
        ),
        ("search index", _index_step(settings, store)),
    ]
    return BuildSummary(outcomes=outcomes, steps=steps)
