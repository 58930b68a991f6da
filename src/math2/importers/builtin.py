"""Registers math2's built-in importers (each module adds itself to the registry)."""

from math2.importers import (  # noqa: F401
    afp,
    agda_unimath,
    matching,
    mathlib,
    mizar,
    setmm,
    theorem_lists,
)
