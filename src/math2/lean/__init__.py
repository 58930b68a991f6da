"""Lean verification: REPL transport and pool, diagnostics, statement hygiene, backends.

The names below are imported on first use (`__getattr__`), so a module of the package that
needs none of them (the lexer that search reads queries with, the limits the settings hold)
does not pull in the backends, the pool and their HTTP and process libraries. The backend, pool
and checker the settings ask for are made a layer up, in `math2.services.lean`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from math2.errors import Math2Error

if TYPE_CHECKING:
    from math2.lean.backends import (
        KiminaBackend,
        LakeBackend,
        LeanBackend,
        RawOutcome,
        ReplBackend,
    )
    from math2.lean.checker import CheckItem, CheckResult, LeanChecker, Mode, Status
    from math2.lean.diagnostics import Diagnostic, Kind, classify_text, diagnostics
    from math2.lean.hygiene import HygieneReport, check_statement, split_header
    from math2.lean.identity import LeanIdentity
    from math2.lean.limits import Limits
    from math2.lean.pool import PoolConfig, ReplPool
    from math2.lean.statement import NotAStatement, benchmark_code, split_item, statement_item
    from math2.lean.trust import ContextTrust

# name → the module of the package that defines it
_LAZY = {
    **dict.fromkeys(
        ("KiminaBackend", "LakeBackend", "LeanBackend", "RawOutcome", "ReplBackend"), "backends"
    ),
    **dict.fromkeys(("CheckItem", "CheckResult", "LeanChecker", "Mode", "Status"), "checker"),
    **dict.fromkeys(("Diagnostic", "Kind", "classify_text", "diagnostics"), "diagnostics"),
    **dict.fromkeys(("HygieneReport", "check_statement", "split_header"), "hygiene"),
    "LeanIdentity": "identity",
    "Limits": "limits",
    **dict.fromkeys(("PoolConfig", "ReplPool"), "pool"),
    **dict.fromkeys(
        ("NotAStatement", "benchmark_code", "split_item", "statement_item"), "statement"
    ),
    "ContextTrust": "trust",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class LeanNotConfigured(Math2Error):
    """No usable Lean backend is configured on this machine (the backends the settings ask for
    are made in `math2.services.lean`: settings are a layer above Lean)."""


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
    "split_header",
    "split_item",
    "statement_item",
]
