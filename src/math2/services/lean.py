"""The Lean side of the services, from the settings: the backend they ask for, the REPL pool
they describe (the local backend's and each Ray node's), and a checker on them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from math2.lean import (
    KiminaBackend,
    LakeBackend,
    LeanBackend,
    LeanChecker,
    LeanNotConfigured,
    PoolConfig,
    ReplBackend,
)

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.lean.cache import ResultCache
    from math2.lean.library import LibraryTables
    from math2.store import Store

# The folders of Lean core's shipped sources whose declarations join the tables (statements
# name `Nat.sqrt`, `Membership`, `HasSubset` from here; `Lean.*` is the compiler's own).
CORE_FOLDERS = ("Init", "Std")


def make_backend(settings: Settings, backend: str | None = None) -> LeanBackend:
    """The backend the settings ask for; LeanNotConfigured says what is missing."""
    lean = settings.lean
    kind = backend or lean.backend
    if kind == "kimina":
        return KiminaBackend(lean.kimina_url, lean.kimina_api_key)
    project = lean.project_dir
    if project is None or not Path(project).exists():
        raise LeanNotConfigured(
            f"the {kind!r} backend needs a Lake project with Mathlib: run `math2 lean setup`, "
            "then set lean.project_dir in math2.toml (or MATH2_LEAN__PROJECT_DIR), or use "
            "MATH2_LEAN__BACKEND=kimina with a Kimina Lean Server"
        )
    if kind == "lake":
        return LakeBackend(project, memory_limit_mb=lean.memory_limit_mb, concurrency=lean.workers)
    if kind == "repl":
        return ReplBackend.from_config(pool_config(settings))
    raise LeanNotConfigured(f"unknown Lean backend {kind!r} (repl, kimina or lake)")


def pool_config(settings: Settings) -> PoolConfig:
    """The REPL pool the settings describe (the local backend's, and each Ray node's)."""
    lean = settings.lean
    return PoolConfig(
        argv=lean.repl_command,
        cwd=lean.project_dir,
        size=lean.workers,
        timeout_s=lean.timeout_s,
        header_timeout_s=lean.header_timeout_s,
        memory_limit_mb=lean.memory_limit_mb,
        recycle_after_uses=lean.recycle_after_uses,
        recycle_above_mb=lean.recycle_above_mb,
    )


def make_checker(
    settings: Settings,
    store: Store | None = None,
    backend: str | None = None,
    *,
    allow_compiled: bool = False,
    lean_backend: LeanBackend | None = None,
    cache: ResultCache | None = None,
    use_cache: bool = True,
) -> LeanChecker:
    """The one way a checker is made: the configured backend (or `lean_backend`, a Ray worker's
    actor) and, given a store, the result cache (or `cache`; none with `use_cache=False`) and
    the library's tables (`library_tables`: read whatever the cache flag says);
    `allow_compiled` (proofs trusting compiled code) only ever from the caller."""
    from math2.lean.cache import ResultCache

    if cache is None and store is not None and use_cache:
        cache = ResultCache(store)
    return LeanChecker(
        lean_backend or make_backend(settings, backend),
        cache=cache,
        header=settings.lean.header,
        timeout_s=settings.lean.timeout_s,
        limits=settings.lean.limits,
        allow_compiled=allow_compiled,
        known_name=library_tables(settings, store),
    )


def library_tables(settings: Settings, store: Store | None) -> LibraryTables:
    """The library's class, name and scoped-instance tables (`math2.lean.library`): the store's
    `lean4` libraries (Mathlib, Batteries where imported) joined to Lean core's shipped sources
    when the pinned toolchain is installed (`math2 lean setup`)."""
    from math2.lean.library import LibraryTables, join, store_tables

    tables = store_tables(store) if store is not None else LibraryTables()
    core = core_sources(settings)
    if core is not None:
        tables = join(tables, source_tables(core))
    return tables


def core_sources(settings: Settings) -> Path | None:
    """Lean core's sources as the pinned toolchain ships them (elan's
    `toolchains/<toolchain>/src/lean`), or None when it is not installed."""
    from math2.services.spec import find_pin

    pin = find_pin(settings)
    toolchain = settings.lean.toolchain or (pin.toolchain if pin is not None else None)
    if not toolchain:
        return None
    folder = toolchain.replace("/", "--").replace(":", "---")
    root = Path.home() / ".elan" / "toolchains" / folder / "src" / "lean"
    return root if (root / "Init").is_dir() else None


@lru_cache(maxsize=4)
def source_tables(root: Path, folders: tuple[str, ...] = CORE_FOLDERS) -> LibraryTables:
    """The tables of the Lean sources under `root`'s `folders` (Lean core's; a fixture's), read
    with the importers' scanner (`math2.importers.lean_source`)."""
    from math2.importers.lean_source import scan_file
    from math2.lean.library import LibraryDecl, tables_from

    decls = []
    notations = []  # the notation commands (tables_from leaves a file's `local` ones out)
    for folder in folders:
        for path in sorted((root / folder).rglob("*.lean")):
            scanned = scan_file(root, path)
            notations += scanned.notations
            for d in scanned.declarations:
                if d.name:
                    decls.append(
                        LibraryDecl(
                            name=d.name,
                            kind=d.kind,
                            statement=d.statement,
                            attributes=tuple(d.attributes),
                            modifiers=tuple(d.modifiers),
                            core=folder in CORE_FOLDERS,
                        )
                    )
    return tables_from(decls, base=f"sources:{'+'.join(folders)}", notations=notations)
