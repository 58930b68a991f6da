"""Lean verification: REPL transport and pool, diagnostics, statement hygiene, backends."""

from __future__ import annotations

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
