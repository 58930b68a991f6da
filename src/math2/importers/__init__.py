"""Importers: one module per route, each filling the store from a source at its pin.

The registry's names are loaded on first use: a reader of one importer's module (the search
index reads `lean_notation`) does not import the registry and pydantic with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["IMPORTERS", "ImportResult", "ImporterSpec", "register"]

if TYPE_CHECKING:
    from math2.importers.registry import IMPORTERS, ImporterSpec, ImportResult, register


def __getattr__(name: str) -> object:
    if name in __all__:
        from math2.importers import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
