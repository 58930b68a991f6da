"""Registers math2's built-in importers (each module adds itself to the registry)."""

from math2.importers import afp, agda_unimath, mathlib, mizar, setmm, theorem_lists  # noqa: F401
