"""The Lean side of the services, from the settings: the backend they ask for, the REPL pool
they describe (the local backend's and each Ray node's), and a checker on them."""

from __future__ import annotations

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
    from math2.store import Store


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
) -> LeanChecker:
    """The one way a checker is made: the configured backend (or `lean_backend`, a Ray worker's
    actor) and, given a store, the result cache (or `cache`) and the library's name table
    (shadowing); `allow_compiled` (proofs trusting compiled code) only ever from the caller."""
    from math2.lean.cache import ResultCache
    from math2.lean.library import LibraryNames

    if cache is None and store is not None:
        cache = ResultCache(store)
    return LeanChecker(
        lean_backend or make_backend(settings, backend),
        cache=cache,
        header=settings.lean.header,
        timeout_s=settings.lean.timeout_s,
        limits=settings.lean.limits,
        allow_compiled=allow_compiled,
        known_name=LibraryNames(store) if store is not None else None,
    )
