"""The notation table comes from what the import read (issue 45 §6, issue 46 §2): the index
built from the stored notation commands is the index built by scanning the checkout again, file
for file, and building it reads no Lean file for notation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

import math2.importers.lean_source as lean_source
from math2.importers.common import replacing
from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import SearchIndex, build_index
from math2.sources import load_manifest
from math2.store import NotationRecord
from tests.conftest import REPO
from tests.retrieval.conftest import with_library

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leannotation"


@pytest.fixture
def store(sqlite_store):
    return with_library(sqlite_store, FIX)


def _files(folder: Path) -> dict[str, object]:
    """Every file of an index, its bytes (meta.json's content but for when it was built)."""
    out: dict[str, object] = {}
    for p in folder.rglob("*"):
        if p.is_file():
            out[str(p.relative_to(folder))] = p.read_bytes()
    out["meta.json"] = json.loads(out["meta.json"]) | {"built_at": None}  # type: ignore[arg-type]
    return out


def test_the_import_stores_every_notation_command(store) -> None:
    with store.session() as s:
        rows = s.scalars(select(NotationRecord).order_by(NotationRecord.id)).all()
        got = [(r.module, r.symbol, r.constants, r.namespace, r.scoped, r.local) for r in rows]
    assert got == [
        ("Mathlib.Marks.Basic", "𝔉", ["fixedPts"], "Marks", False, False),
        ("Mathlib.Marks.Basic", "≍≍", ["agree"], "Marks", False, False),
        ("Mathlib.Marks.Basic", "⇑⇑", ["bump"], "Marks", True, False),
        ("Mathlib.Marks.Basic", "ℬ", ["bump"], "Marks", False, True),
        ("Mathlib.Marks.Twice", "𝔉", ["zeroPts"], "Marks", False, False),
        ("Mathlib.Marks.Twice", "⇑⇑", ["Marks.bump"], "Marks", False, False),
    ]


def test_importing_again_replaces_them(store) -> None:
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with replacing():
        import_lean_library(store, manifest.get("mathlib"), FIX)
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(NotationRecord)) == 6


def test_the_index_from_stored_notation_is_the_index_from_the_checkout(
    store, tmp_path: Path, monkeypatch
) -> None:
    real_scan = lean_source.scan_file

    def no_scan(root: Path, path: Path):
        raise AssertionError(f"the checkout was scanned again: {path}")

    monkeypatch.setattr(lean_source, "scan_file", no_scan)
    build_index(store, tmp_path / "stored", dense=False, mathlib_dir=FIX)
    monkeypatch.setattr(lean_source, "scan_file", real_scan)
    with store.session() as s:  # a store imported before the commands were kept
        s.execute(delete(NotationRecord))
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(NotationRecord)) == 0
    build_index(store, tmp_path / "scanned", dense=False, mathlib_dir=FIX)

    stored, scanned = _files(tmp_path / "stored"), _files(tmp_path / "scanned")
    assert stored.keys() == scanned.keys()
    assert [f for f in stored if stored[f] != scanned[f]] == []
    ix = SearchIndex(tmp_path / "stored")
    assert ix.levers.notation is not None
    # both files' `𝔉`, in file order; `⇑⇑` global in one file; the local `ℬ` left out
    assert ix.levers.notation.symbols == {
        "𝔉": ["Marks.fixedPts", "Marks.zeroPts"],
        "≍≍": ["Marks.agree"],
        "⇑⇑": ["Marks.bump"],
    }
    assert ix.levers.notation.scoped == frozenset()
    assert ix.search("𝔉 f", k=3)[0].name in {"Marks.fixedPts", "Marks.zeroPts"}


def test_without_a_checkout_the_stored_notation_still_counts(store, tmp_path: Path) -> None:
    build_index(store, tmp_path / "ix", dense=False, mathlib_dir=None)
    ix = SearchIndex(tmp_path / "ix")
    assert ix.levers.notation is not None and "≍≍" in ix.levers.notation.symbols
