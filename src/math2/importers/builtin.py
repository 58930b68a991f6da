"""Registers math2's built-in importers (each module adds itself to the registry)."""
