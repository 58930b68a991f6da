"""The sources manifest and the intake classes derived from it (K6.2)."""

from math2.sources.intake import (
    Authored,
    IntakeClass,
    IntakeDecision,
    IntakeFacts,
    Kind,
    Limit,
    RedFlag,
    Rule,
    derive,
)
from math2.sources.manifest import Manifest, ManifestError, Pin, SourceEntry, load_manifest
from math2.sources.sync import SyncReport, pin_row, sync_manifest, sync_source

__all__ = [
    "Authored",
    "IntakeClass",
    "IntakeDecision",
    "IntakeFacts",
    "Kind",
    "Limit",
    "Manifest",
    "ManifestError",
    "Pin",
    "RedFlag",
    "Rule",
    "SourceEntry",
    "SyncReport",
    "derive",
    "load_manifest",
    "pin_row",
    "sync_manifest",
    "sync_source",
]
