"""The Stacks-to-Mathlib alignment (K6.7 step 3) from Mathlib's own `@[stacks TAG "…"]`
attributes: each (Stacks tag, Mathlib declaration) pair of the Mathlib checkout at the pin is a
candidate crosswalk row of the node `stacks:TAG` (`matching.write_pairs`), judged by the align
role like any other candidate; the attribute's comment is not copied.

The checkout is the one the build uses for Mathlib: `data.stacks_dir` or `data.mathlib_dir`,
else the checkout `math2 build` fetched at Mathlib's pin (so the source's pin is Mathlib's).
Only the files that mention `stacks` are scanned, with the same lexical scanner as Mathlib's
source scan (`lean_source.scan_file`). A folder of pairs (`.jsonl`/`.csv`/`.parquet`: tag,
decl) is read as a dataset, as before this route.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from math2.importers.common import skip_if_done
from math2.importers.matching import Pair, import_pairs, write_pairs
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store

if TYPE_CHECKING:
    from math2.config import Settings

SOURCE = "stacks-mathlib"


def stacks_pairs(root: Path) -> tuple[list[Pair], int, int]:
    """(pairs, files scanned, tagged declarations without a name) of a Mathlib checkout."""
    from math2.importers.lean_source import lean_files, scan_file

    base = root / "Mathlib" if (root / "Mathlib").is_dir() else root
    pairs: list[Pair] = []
    scanned = anonymous = 0
    for path in lean_files(base):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "stacks" not in text:
            continue
        scanned += 1
        for d in scan_file(root, path).declarations:
            if not d.stacks:
                continue
            if d.name is None:  # an anonymous instance: its name needs the whole library
                anonymous += len(d.stacks)
                continue
            for tag in dict.fromkeys(d.stacks):
                pairs.append((tag, d.name, {"module": d.module, "line": d.line}))
    return pairs, scanned, anonymous


def _is_checkout(path: Path) -> bool:
    return (path / "Mathlib").is_dir() or any(path.glob("*.lean"))


def import_stacks(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The `@[stacks]` pairs of a Mathlib checkout at the pin (or a folder of pairs)."""
    if not _is_checkout(path):
        return import_pairs(store, entry, path)
    from math2.importers.systems import checkout_commit
    from math2.util.files import file_digest

    commit = checkout_commit(path, entry)  # refused when not at the pin
    base = path / "Mathlib" if (path / "Mathlib").is_dir() else path
    digest = f"git:{commit}" if commit else file_digest(base)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    pairs, scanned, anonymous = stacks_pairs(path)
    result = write_pairs(store, entry, path, digest, pairs, commit=commit)
    result.counts = {
        **result.counts,
        "files scanned": scanned,
        "tags on anonymous instances (not read)": anonymous,
    }
    result.notes = [f"read Mathlib's @[stacks] attributes at commit {commit or 'unknown'}"]
    return result


def locate(settings: Settings) -> tuple[Path | None, str]:
    """`data.stacks_dir`, `data.mathlib_dir`, else the Mathlib checkout fetched at the pin."""
    for d in (settings.data.stacks_dir, settings.data.mathlib_dir):
        if d and Path(d).is_dir():
            return Path(d), ""
    from math2.importers.fetch import cached_checkout
    from math2.sources import ManifestError, load_manifest

    try:
        pin = load_manifest(settings.manifest).get(SOURCE).current_pin
    except (ManifestError, OSError, KeyError):
        pin = None
    if pin is not None and pin.commit:
        done = cached_checkout(Path(settings.data.cache_dir), "mathlib", pin.commit)
        if done is not None:
            return done, ""
    return None, (
        "no Mathlib checkout at the pin to read @[stacks] from: set MATH2_DATA__MATHLIB_DIR, or "
        "let `math2 build` fetch Mathlib"
    )


register(ImporterSpec(SOURCE, locate, import_stacks, data_field="mathlib_dir"))
