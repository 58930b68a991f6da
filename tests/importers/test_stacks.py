"""Stacks tags from Mathlib's own `@[stacks]` attributes (the fixture Lean project written for
math2) as candidate pairs that the align role selects like any other; the attribute's comment
is not copied; a checkout at another commit is refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.errors import InputError
from math2.importers.stacks import import_stacks, stacks_pairs
from math2.roles.align.job import AlignOptions, select_candidates
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Node
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES, REPO

LEANPROJ = FIXTURES / "leanproj"


def _manifest(tmp_path: Path, commit: str):
    return load_manifest(pinned_manifest(tmp_path, {"stacks-mathlib": commit}))


def test_pairs_of_the_fixture_project() -> None:
    pairs, scanned, anonymous = stacks_pairs(LEANPROJ)
    assert [(t, d) for t, d, _ in pairs] == [("09HY", "Demo.idf_apply")]
    assert (scanned, anonymous) == (1, 0)


def test_candidates_for_the_align_role(sqlite_store, tmp_path: Path) -> None:
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    res = import_stacks(sqlite_store, manifest.get("stacks-mathlib"), LEANPROJ)
    assert res.counts["pairs"] == 1 and res.counts["candidate rows"] == 1
    with sqlite_store.session() as s:
        row = s.scalar(select(Crosswalk))
        assert (row.system, row.target, row.status) == ("lean4", "Demo.idf_apply", "candidate")
        assert s.get(Node, row.node_id).key == "stacks:09HY"
        assert "second part" not in str(row.extra) and s.get(Node, row.node_id).title is None
        assert select_candidates(s, AlignOptions(model="m", dataset="stacks-mathlib")) == [row.id]
    again = import_stacks(sqlite_store, manifest.get("stacks-mathlib"), LEANPROJ)
    assert again.skipped_already_done


def test_a_checkout_at_another_commit_is_refused(sqlite_store, tmp_path: Path) -> None:
    root = tmp_path / "mathlib4"
    shutil.copytree(LEANPROJ, root)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(root)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run([*git, *args], check=True)
    manifest = _manifest(tmp_path, "1" * 40)
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    with pytest.raises(InputError, match="pins stacks-mathlib at 111111111111"):
        import_stacks(sqlite_store, manifest.get("stacks-mathlib"), root)
    with sqlite_store.session() as s:
        assert s.scalar(select(Crosswalk)) is None
