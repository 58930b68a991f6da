"""Fixtures of the retrieval tests."""

from pathlib import Path

import pytest

from math2.importers.mathlib import import_lean_library
from math2.sources import load_manifest, sync_manifest
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


@pytest.fixture
def store(sqlite_store):
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(sqlite_store, manifest.get("mathlib"), FIX)
    return sqlite_store
