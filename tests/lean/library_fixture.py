"""The library tables of math2's tests: a small library written for math2
(tests/fixtures/lean_library: Lean core-shaped `Init/`, Mathlib-shaped `Mathlib/`), read the way
Lean core's installed sources are (`math2.services.lean.source_tables`)."""

from __future__ import annotations

from pathlib import Path

from math2.services.lean import source_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lean_library"
LIBRARY = source_tables(FIXTURE, ("Init", "Mathlib"))
CORE = source_tables(FIXTURE, ("Init",))
