"""Importers: one module per route, each filling the store from a source at its pin."""

from math2.importers.registry import IMPORTERS, ImporterSpec, ImportResult, register

__all__ = ["IMPORTERS", "ImportResult", "ImporterSpec", "register"]
