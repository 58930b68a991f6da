"""Lean verification: REPL transport and pool, diagnostics, statement hygiene, backends."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from math2.errors import Math2Error
from math2.lean.backends import KiminaBackend, LakeBackend, LeanBackend, RawOutcome, ReplBackend
from math2.lean.checker import CheckItem, CheckResult, LeanChecker, Mode, Status
from math2.lean.diagnostics import Diagnostic, Kind, classify_text, diagnostics
from math2.lean.hygiene import HygieneReport, check_statement, split_header
from math2.lean.identity import LeanIdentity
from math2.lean.limits import Limits
from math2.lean.pool import PoolConfig, ReplPool
from math2.lean.statement import NotAStatement, benchmark_code, split_item, statement_item
from math2.lean.trust import ContextTrust

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.store import Store


class LeanNotConfigured(Math2Error):
    """No usable Lean backend is configured on this machine."""


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
) -> LeanChecker:
    """A checker with the configured backend and, given a store, the result cache and the
    library's name table (shadowing); `allow_compiled` (proofs trusting compiled code) only
    ever from the caller."""
    from math2.lean.cache import ResultCache
    from math2.lean.library import LibraryNames

    cache = ResultCache(store) if store is not None else None
    return LeanChecker(
        make_backend(settings, backend),
        cache=cache,
        header=settings.lean.header,
        timeout_s=settings.lean.timeout_s,
        limits=settings.lean.limits,
        allow_compiled=allow_compiled,
        known_name=LibraryNames(store) if store is not None else None,
    )


__all__ = [
    "CheckItem",
    "CheckResult",
    "ContextTrust",
    "Diagnostic",
    "HygieneReport",
    "KiminaBackend",
    "Kind",
    "LakeBackend",
    "LeanBackend",
    "LeanChecker",
    "LeanIdentity",
    "LeanNotConfigured",
    "Limits",
    "Mode",
    "NotAStatement",
    "PoolConfig",
    "RawOutcome",
    "ReplBackend",
    "ReplPool",
    "Status",
    "benchmark_code",
    "check_statement",
    "classify_text",
    "diagnostics",
    "make_backend",
    "make_checker",
    "pool_config",
    "split_header",
    "split_item",
    "statement_item",
]
