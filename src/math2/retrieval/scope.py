"""Which libraries a search covers, and how results from several are put in one list.

A search covers one library by default: the library of the Lean project in the working
directory when its index is built (the `name` of its lakefile), else Mathlib, else the only
library built. Searching every library merges their results by a score that means the same in
each: how much of the query a declaration's words contain (`SearchIndex.coverage`), times its
fused score relative to its own library's best. Fused scores alone are reciprocal ranks, so
every library's first hit would tie (and set.mm's answers to a Mathlib query would take every
other slot); raw BM25 scores depend on each corpus's statistics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from math2.retrieval.index import Hit, SearchIndex

ALL = "all"
_LAKE_TOML = re.compile(r'^\s*name\s*=\s*"([^"]+)"', re.M)
_LAKE_LEAN = re.compile(r"^\s*package\s+«?([\w.'-]+)»?", re.M)


@dataclass
class LibraryHit:
    library: str
    hit: Hit
    score: float  # comparable across libraries (see the module docstring)


def built_libraries(root: Path) -> dict[str, Path]:
    """Every built index under the index folder, by library name."""
    if not root.is_dir():
        return {}
    return {d.name: d for d in sorted(root.iterdir()) if (d / "meta.json").exists()}


def lean_project_library(cwd: Path) -> str | None:
    """The package name of the Lake project at `cwd` (lakefile.toml or lakefile.lean), if any."""
    for file, pattern in (("lakefile.toml", _LAKE_TOML), ("lakefile.lean", _LAKE_LEAN)):
        path = cwd / file
        if path.is_file():
            m = pattern.search(path.read_text(encoding="utf-8", errors="replace"))
            if m:
                return m.group(1)
    return None


def default_library(built: dict[str, Path], cwd: Path) -> str | None:
    """The library a search covers when none is named (see the module docstring)."""
    project = lean_project_library(cwd)
    if project:
        for name in built:
            if name.lower() == project.lower():
                return name
    if "mathlib" in built:
        return "mathlib"
    return next(iter(built)) if len(built) == 1 else None


def search_libraries(
    indexes: dict[str, SearchIndex], query: str, k: int, first: str | None = None, **kw: Any
) -> list[LibraryHit]:
    """The top `k` over several libraries, merged by the comparable score; ties go to `first`
    (the default library), then to the better fused rank."""
    merged = []
    for name, index in indexes.items():
        hits = index.search(query, k, **kw)
        if not hits:
            continue
        cov = index.coverage(query, [h.position for h in hits])
        best = hits[0].score
        for rank, (h, c) in enumerate(zip(hits, cov, strict=True)):
            merged.append((LibraryHit(name, h, float(c) * h.score / best), name != first, rank))
    merged.sort(key=lambda t: (-round(t[0].score, 9), t[1], t[2]))
    return [m[0] for m in merged[:k]]
