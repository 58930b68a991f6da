"""`math2 import`: import one source at its pin (`import_one`), the step `math2 build` runs for
every source (`run_importer`), the skip a source's class or missing pin gets, and the resumer
of the import job (`math2.importers.runs`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from math2.config import Settings
from math2.errors import InputError, Math2Error
from math2.importers.registry import ImporterSpec, ImportResult, load_builtin_importers
from math2.importers.runs import JOB as IMPORT_JOB
from math2.importers.runs import STEPS as IMPORT_STEPS
from math2.runs import CannotResume, Resume, RunSummary, register_job
from math2.sources import IntakeClass, SourceEntry, load_manifest, sync_manifest
from math2.store import Run, Store

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


def class_skip(entry: SourceEntry) -> SourceOutcome | None:
    """A skip when the source's class lets nothing in."""
    decision = entry.decide()
    if decision.intake not in NOT_IMPORTED:
        return None
    return SourceOutcome(
        source=entry.name,
        status="skipped",
        reason=f"class {decision.intake.value}: {NOT_IMPORTED[decision.intake]}",
    )


def _entry_place(manifest: Path | str, name: str) -> str:
    """`FILE:LINE` of a source's entry in the manifest (`FILE` when it cannot be found)."""
    try:
        lines = Path(manifest).read_text("utf-8").splitlines()
    except OSError:
        return str(manifest)
    want = re.compile(rf"^\s*-?\s*name:\s*['\"]?{re.escape(name)}['\"]?\s*(#.*)?$")
    line = next((i for i, text in enumerate(lines, 1) if want.match(text)), None)
    return f"{manifest}:{line}" if line else str(manifest)


def unpinned_help(settings: Settings, entry: SourceEntry, spec: ImporterSpec) -> str:
    """What a user does about a source the manifest gives no pin: the entry to add and the
    command to run (an import reads a source only at a pin: K6.3)."""
    where = f"its entry at {_entry_place(settings.manifest, entry.name)}"
    if spec.fetch == "hf":
        what = f"the Hugging Face revision (a commit id) of {entry.url or 'the dataset'}"
        pin = "pins: [{commit: REVISION}]"
        data = ("FILE", "a parquet or JSONL copy at that revision; without it math2 fetches one")
    elif spec.fetch == "git":
        what = f"the commit of {entry.url or 'the repository'} to read"
        pin = "pins: [{commit: COMMIT, date: YYYY-MM-DD}]"
        data = ("CHECKOUT", "a checkout at that commit; without it math2 fetches one")
    else:
        what = "the version of the data to read"
        pin = "pins: [{version: VERSION}]"
        data = ("PATH", "the data at that version")
    why = (entry.unpinned_reason or "").rstrip(".")
    return (
        f"not pinned{f' ({why})' if why else ''}: add `{pin}` with {what} to {where} "
        f"(replacing its unpinned_reason), then run `math2 import {entry.name} {data[0]}` "
        f"({data[0]}: {data[1]})"
    )


def run_importer(
    settings: Settings,
    store: Store,
    entry: SourceEntry,
    spec: ImporterSpec,
    path: Path | None,
    *,
    offline: bool = True,
    say: Callable[[str], None] = lambda _m: None,
) -> SourceOutcome:
    """Run one importer on `path`, or on what `importers.supply` finds (a local copy, an
    earlier fetch, or a fetch at the pin); a skip that says why when the data is not here."""
    how = f"from {path}"
    if path is None:
        from math2.importers.supply import supply

        got = supply(settings, entry, spec, offline=offline, say=say)
        if got.path is None:
            return SourceOutcome(source=entry.name, status="skipped", reason=got.how)
        path, how = got.path, got.how
    from math2.util.progress import stage

    with stage(f"import {entry.name}"):
        result = spec.run(store, entry, Path(path))
    reason = f"already imported at this pin ({how})" if result.skipped_already_done else how
    return SourceOutcome(source=entry.name, status="imported", reason=reason, result=result)


class UnknownSource(InputError):
    """A source name that is not in the manifest, or has no importer."""


def import_one(
    settings: Settings,
    store: Store,
    name: str,
    path: Path | None = None,
    *,
    force: bool = False,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> SourceOutcome:
    """Sync the manifest and import one source (from `path`, or wherever its importer looks,
    fetching a fetchable library at its pin when it is nowhere here).

    With `force`, the data already imported at the pin is replaced in the same transaction.
    """
    from math2.importers.common import replacing

    manifest = load_manifest(settings.manifest)
    importers = load_builtin_importers()
    names = sorted(importers)
    try:
        entry = manifest.get(name)
    except KeyError:
        raise UnknownSource(
            settings.manifest,
            None,
            f"no source named {name!r}; sources with an importer: {', '.join(names)} "
            "(`math2 sources check` lists every source)",
        ) from None
    if name not in importers:
        raise UnknownSource(
            settings.manifest,
            None,
            f"no importer for {name!r} in this version (its route: {entry.route}); "
            f"importers: {', '.join(names)}",
        )
    if entry.current_pin is None:
        raise Math2Error(f"{name}: {unpinned_help(settings, entry, importers[name])}")
    if path is not None and not Path(path).exists():
        raise InputError(path, None, "no such file or directory")
    with store.lock("build", wait=wait, on_wait=on_wait):
        with store.session() as s:
            sync_manifest(s, manifest)
        if (skip := class_skip(entry)) is not None:
            return skip
        say = progress or (lambda _m: None)
        if force:
            with replacing():
                return run_importer(
                    settings, store, entry, importers[name], path, offline=False, say=say
                )
        return run_importer(settings, store, entry, importers[name], path, offline=False, say=say)


async def _resume_import(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    """`math2 runs resume` of an import run (job `import`, `math2.importers.runs`): import the
    source again at the run's pin, from the path the run recorded (or wherever its importer
    looks): a finished import is not repeated."""
    resume.local_only(IMPORT_JOB)

    name, _, pin = run.key.partition("@")
    try:
        entry = load_manifest(settings.manifest).get(name)
    except KeyError:
        raise CannotResume(f"run {run.id}: {name} is no longer in the manifest") from None
    current = entry.current_pin.key if entry.current_pin is not None else ""
    if current != pin:
        raise CannotResume(
            f"run {run.id} imported {name} at pin {pin}; the manifest pins it at {current or '?'}"
            f" now: import that pin (`math2 import {name}`) or bump (`math2 bump {name}`)"
        )
    recorded = (run.params or {}).get("path")
    path = Path(recorded) if recorded else None
    if path is None or not path.exists():
        raise CannotResume(
            f"run {run.id}: the data it imported ({recorded or 'no path recorded'}) is not there:"
            f" `math2 import {name} PATH` with the data"
        )
    outcome = await asyncio.to_thread(import_one, settings, store, name, path)
    result = outcome.result
    if outcome.status != "imported" or result is None:
        raise CannotResume(f"run {run.id}: {name} was not imported ({outcome.reason})")
    skipped = result.skipped_already_done
    return RunSummary(
        run_id=run.id,
        job=IMPORT_JOB,
        total=len(IMPORT_STEPS),
        done=0 if skipped else len(IMPORT_STEPS),
        skipped=len(IMPORT_STEPS) if skipped else 0,
        finished=True,
    )


register_job(IMPORT_JOB, _resume_import)
