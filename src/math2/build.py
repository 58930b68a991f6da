"""`math2 build`: import every source this machine has (each as `math2.import_source` imports
one), run the later steps (crosswalks, node selection, a search index per library), then report
what it skipped and why."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from math2.config import Settings
from math2.import_source import SourceOutcome, class_skip, run_importer, unpinned_help
from math2.importers.registry import ImporterSpec, load_builtin_importers
from math2.sources import Manifest, SourceEntry, load_manifest, sync_manifest
from math2.sources.intake import Kind
from math2.store import Store

log = logging.getLogger(__name__)

# The main library: a build that could not have it exits with EXIT_NO_MAIN_LIBRARY (README,
# docs/sources.md), so that `math2 build && …` knows the corpus lacks it.
MAIN_LIBRARY = "mathlib"
EXIT_NO_MAIN_LIBRARY = 3


class BuildSummary(BaseModel):
    """All outcomes of one build."""

    outcomes: list[SourceOutcome]
    steps: list[tuple[str, str]]
    elapsed_s: float = 0.0

    @property
    def failed(self) -> list[str]:
        return [o.source for o in self.outcomes if o.status == "failed"]

    @property
    def main_library_missing(self) -> bool:
        """The manifest lists the main library and this build did not import it."""
        return any(o.source == MAIN_LIBRARY and o.status != "imported" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """1: an import failed; EXIT_NO_MAIN_LIBRARY: no Mathlib; 0 otherwise."""
        if self.failed:
            return 1
        return EXIT_NO_MAIN_LIBRARY if self.main_library_missing else 0

    def last_line(self) -> str:
        """The build's last line: what it did, how long it took, and why it exits non-zero."""
        n = {k: sum(1 for o in self.outcomes if o.status == k) for k in ("imported", "skipped")}
        sources = "source" if n["imported"] == 1 else "sources"
        text = (
            f"math2 build: {n['imported']} {sources} imported, {n['skipped']} skipped, "
            f"{len(self.failed)} failed, {len(self.steps)} steps, in {self.elapsed_s:.0f}s"
        )
        if self.failed:
            return f"{text}; exit 1: imports failed: {', '.join(self.failed)}"
        if self.main_library_missing:
            return (
                f"{text}; exit {EXIT_NO_MAIN_LIBRARY}: the corpus lacks {MAIN_LIBRARY}, its main "
                f"library (the `skipped  {MAIN_LIBRARY}` line above says how to supply it)"
            )
        return f"{text}; exit 0"


def _build_skip(
    settings: Settings, entry: SourceEntry, importers: dict[str, ImporterSpec]
) -> SourceOutcome | None:
    """A skip when math2 has no importer for the source, or the manifest gives it no pin."""
    if entry.name not in importers:
        reason = f"no importer in this version for its route ({entry.route})"
    elif entry.current_pin is None:
        reason = unpinned_help(settings, entry, importers[entry.name])
    else:
        return None
    return SourceOutcome(source=entry.name, status="skipped", reason=reason)


def _index_fingerprint(store: Store, name: str) -> list[int]:
    """What an index of `name` was built from: count, first and last mention id."""
    from sqlalchemy import func, select

    from math2.store import Mention, Source

    with store.session() as s:
        row = s.execute(
            select(func.count(Mention.id), func.min(Mention.id), func.max(Mention.id))
            .join(Source, Source.id == Mention.source_id)
            .where(
                Source.name == name,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
            )
        ).one()
    return [int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)]


def _index_steps(
    settings: Settings, store: Store, libraries: list[str], say: Callable[[str], None]
) -> list[tuple[str, str]]:
    """A BM25 (+ PageRank prior) index for every library in the store, so that `math2
    search` works after a build, with dense embeddings for the libraries of
    `retrieval.dense_libraries` (resumed where a killed build left them)."""
    import json

    from math2.retrieval.aids import mathlib_checkout
    from math2.retrieval.encoder import unavailable
    from math2.retrieval.index import build_index
    from math2.retrieval.text import TEXT_VERSION
    from math2.util.progress import stage

    steps = []
    encoder = settings.retrieval.encoder
    why_not = unavailable(encoder) if settings.retrieval.dense_libraries else None
    for name in libraries:
        # on for the configured libraries; otherwise an earlier embedding of these very
        # documents is kept (None), as `math2 index build` keeps it
        dense = True if name in settings.retrieval.dense_libraries and why_not is None else None
        out = Path(settings.retrieval.index_dir) / name
        fp = _index_fingerprint(store, name)
        if fp[0] == 0:
            continue
        meta_path = out / "meta.json"
        if meta_path.exists():
            old = json.loads(meta_path.read_text())
            same = [old.get("count"), *(old.get("first_last") or [])] == fp
            # meta.json names a dense part only once it is whole (build_index writes it last)
            dense_ok = not dense or (old.get("dense") or {}).get("encoder") == encoder
            if same and old.get("text_version") == TEXT_VERSION and dense_ok:
                steps.append((f"search index {name}", f"up to date ({fp[0]} declarations)"))
                continue
        try:
            # no total while it runs: its inner stages count; between them the clock says
            # "search index NAME: Ns" rather than a share that does not move
            with stage(f"search index {name}", unit="declarations") as st:
                meta = build_index(
                    store, out, name, dense=dense, progress=say,
                    encoder=encoder, mathlib_dir=mathlib_checkout(settings),
                )  # fmt: skip
                st.update(done=meta["count"], total=meta["count"])
        except LookupError as exc:
            steps.append((f"search index {name}", f"skipped: {exc}"))
            continue
        if meta["dense_chunks"]:
            extra = f"dense embeddings in {meta['dense_chunks']} chunks"
        elif name in settings.retrieval.dense_libraries and why_not:
            extra = f"no dense embeddings: {why_not}"
        else:
            extra = f"no dense embeddings (opt in: math2 index build --library {name} --dense)"
        steps.append(
            (f"search index {name}", f"BM25 over {meta['count']} declarations at {out}; {extra}")
        )
    return steps


def build(
    settings: Settings,
    store: Store,
    manifest: Manifest | None = None,
    on_outcome: Callable[[SourceOutcome], None] | None = None,
    *,
    offline: bool = False,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> BuildSummary:
    """Sync the manifest, run every importer whose data is here (fetching a pinned library
    that is not, unless `offline`), and run the later steps; one build at a time per store."""
    import time

    started = time.monotonic()
    manifest = manifest or load_manifest(settings.manifest)
    with store.lock("build", wait=wait, on_wait=on_wait):
        summary = _build(settings, store, manifest, on_outcome, offline, progress)
    summary.elapsed_s = time.monotonic() - started
    return summary


def _build(
    settings: Settings,
    store: Store,
    manifest: Manifest,
    on_outcome: Callable[[SourceOutcome], None] | None,
    offline: bool,
    progress: Callable[[str], None] | None,
) -> BuildSummary:
    say = progress or (lambda _m: None)
    with store.session() as s:
        sync_manifest(s, manifest)
    importers = load_builtin_importers()
    outcomes: list[SourceOutcome] = []
    for entry in manifest.sources:
        outcome = class_skip(entry) or _build_skip(settings, entry, importers)
        if outcome is None:
            try:
                outcome = run_importer(
                    settings, store, entry, importers[entry.name], None, offline=offline, say=say
                )
            except Exception as exc:  # one source's failure must not stop the others
                log.debug("import of %s failed", entry.name, exc_info=True)
                outcome = SourceOutcome(source=entry.name, status="failed", reason=str(exc))
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    from math2.crosswalk.cluster import cluster
    from math2.crosswalk.select import select_nodes
    from math2.importers.wiedijk import share_facts
    from math2.util.progress import stage

    with store.session() as s:
        with stage("crosswalks and clustering (K6.7)"):
            rep = cluster(s)
        with stage("facts shared across a node (Wiedijk's 100)"):
            shared = share_facts(s)
        with stage("node selection (K6.4)"):
            sel = select_nodes(s, "mathlib", settings.select.requests)
    steps = [
        (
            "crosswalks + clustering (K6.7)",
            f"{rep.edges_linked} edges linked to imported declarations, "
            f"{rep.mentions_joined} mentions joined nodes, {rep.type_hash_joined} by type hash, "
            f"{rep.nodes_merged} nodes merged by Wikidata id, {rep.conflicts} conflicts left, "
            f"{shared} 1000+ nodes given Wiedijk's facts",
        ),
        (
            "node selection (K6.4)",
            f"{sel.total} Mathlib declarations selected: {sel.human_mention} by a human mention,"
            f" {sel.theorem_lists} by the theorem lists, {sel.module_doc_main_results} as "
            f"module-doc main results, {sel.requested_or_bound} requested or bound, "
            f"{sel.statement_definitions} as definitions in selected statements",
        ),
    ]
    libraries = [
        o.source
        for o in outcomes
        if o.status == "imported" and manifest.get(o.source).kind is Kind.LIBRARY
    ]
    steps += _index_steps(settings, store, libraries, say)
    return BuildSummary(outcomes=outcomes, steps=steps)
