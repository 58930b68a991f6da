"""Digests of input files (the keys runs and imports are identified by)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (or of every file under a directory, in name order, each
    preceded by its relative path)."""
    path = Path(path)
    h = hashlib.sha256()
    paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in paths:
        if path.is_dir():
            h.update(str(p.relative_to(path)).encode())
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()
