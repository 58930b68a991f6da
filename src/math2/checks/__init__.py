"""Checks on (informal, formal) pairs, and the n-gram engine of the copy check."""

from math2.checks.ngrams import DEFAULT_N, NgramIndex, NgramIndexError, Overlap, Span

__all__ = ["DEFAULT_N", "NgramIndex", "NgramIndexError", "Overlap", "Span"]
