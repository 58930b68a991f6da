"""Which Lean answered: the backend's identity as it reports itself, never the manifest's wish.

A compile verdict is evidence only together with the Lean that produced it. Each backend is asked
at start (`#eval Lean.versionString` through the REPL or Kimina, `lean --version` for Lake); the
Mathlib commit is read from the project's `lake-manifest.json`. The test doubles answer with a
version that starts with their kind (`fake-repl …`), so a fake never shares a cache entry with a
real Lean, nor with a fake scripted differently.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from math2.lean.library import LibraryTables

VERSION_COMMAND = "#eval Lean.versionString"
_LEAN_VERSION = re.compile(r"Lean \(version ([^,)]+)")


class LeanIdentity(BaseModel):
    """The backend kind, the Lean version it reported, the Mathlib commit of its project."""

    kind: str  # repl | lake | kimina | fake-repl | fake-lean | fake-kimina
    lean_version: str | None = None
    mathlib_commit: str | None = None
    header: str = ""
    note: str = ""  # why a part is missing, in words
    # the library tables hygiene judged with (`math2.lean.library`): their digest, part of the
    # cache key, so that a verdict given under one table is never reused under another
    tables: str = "no library tables"

    @property
    def is_fake(self) -> bool:
        """A test double answered, not Lean."""
        return self.kind.startswith("fake")

    @property
    def complete(self) -> bool:
        """Known well enough to key a cache with (a fake needs no Mathlib)."""
        return bool(self.lean_version) and (bool(self.mathlib_commit) or self.is_fake)

    def label(self) -> str:
        """One line for reports: `repl · Lean 4.19.0 · Mathlib 0123456789ab`."""
        lean = f"Lean {self.lean_version}" if self.lean_version else "Lean version not reported"
        mathlib = (
            f"Mathlib {self.mathlib_commit[:12]}"
            if self.mathlib_commit
            else "no Mathlib (test double)"
            if self.is_fake
            else "Mathlib commit not read"
        )
        text = f"{self.kind} · {lean} · {mathlib}"
        return text + (" — a test double, not Lean" if self.is_fake else "")

    def cache_part(self) -> str:
        """What the cache key takes from the identity (raises if it is not known)."""
        if not self.complete:
            raise ValueError(f"no cache key for an incomplete Lean identity: {self.label()}")
        return json.dumps(
            [self.kind, self.lean_version, self.mathlib_commit or "", self.header, self.tables],
            ensure_ascii=False,
        )

    def with_tables(self, tables: LibraryTables | None) -> LeanIdentity:
        """This identity with the digest of the library tables a checker judges with."""
        return self.model_copy(
            update={"tables": tables.digest if tables is not None else "no library tables"}
        )


def version_from_output(text: str) -> str | None:
    """The version in `#eval Lean.versionString`'s answer (`"4.19.0"`) or `lean --version`."""
    m = _LEAN_VERSION.search(text)
    if m:
        return m.group(1)
    t = text.strip().strip('"').strip()
    return t or None


def kind_of(default: str, version: str | None) -> str:
    """A double reports itself as `fake-<kind> …`; everything else is the backend's own kind."""
    if version and version.startswith("fake-"):
        return version.split()[0]
    return default


def mathlib_commit(project_dir: str | Path | None) -> str | None:
    """The Mathlib revision in the project's `lake-manifest.json`, or None."""
    if project_dir is None:
        return None
    path = Path(project_dir) / "lake-manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for pkg in data.get("packages", []) if isinstance(data, dict) else []:
        if isinstance(pkg, dict) and str(pkg.get("name", "")).lower() == "mathlib":
            rev = pkg.get("rev")
            return str(rev) if rev else None
    return None


def fake_version(kind: str, behaviour: object) -> str:
    """What a double answers for its version: its kind and a digest of how it is scripted."""
    digest = hashlib.sha256(json.dumps(behaviour, sort_keys=True, default=str).encode())
    return f"{kind} {digest.hexdigest()[:12]}"
