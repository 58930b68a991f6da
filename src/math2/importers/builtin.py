"""Registers math2's built-in importers (each module adds itself to the registry)."""

from math2.importers import (  # noqa: F401
    acl2,
    afp,
    agda_unimath,
    ai_informal,
    batteries,
    hol4,
    hol_light,
    matching,
    mathlib,
    mizar,
    naproche,
    nasalib,
    rocq,
    setmm,
    stacks,
    theorem_lists,
    wiedijk,
)
