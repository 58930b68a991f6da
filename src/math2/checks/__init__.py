"""Checks on (informal, formal) pairs, and the n-gram engine of the copy check."""

from math2.checks import lints as _lints  # noqa: F401  (registers the lints)
from math2.checks.base import (
    Check,
    CheckEnv,
    Outcome,
    Pair,
    UnknownCheck,
    check_names,
    make_check,
    pair_key,
    register,
)
from math2.checks.ngrams import DEFAULT_N, NgramIndex, NgramIndexError, Overlap, Span

__all__ = [
    "DEFAULT_N",
    "Check",
    "CheckEnv",
    "NgramIndex",
    "NgramIndexError",
    "Outcome",
    "Overlap",
    "Pair",
    "Span",
    "UnknownCheck",
    "check_names",
    "make_check",
    "pair_key",
    "register",
]
