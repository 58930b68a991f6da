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
from math2.store import Crosswalk, Mention, Node
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


STACKSPROJ = FIXTURES / "stacksproj"  # written for math2: tags on anonymous instances, commands


def test_anonymous_instances_named_as_the_mathlib_import_names_them() -> None:
    from math2.importers.mathlib import read_checkout

    pairs, scanned, missing = stacks_pairs(STACKSPROJ)
    named = {t: d for t, d, _ in pairs}
    mathlib = {r.name for r in read_checkout(STACKSPROJ).records}
    # `instance [Inhabited α] : IsGood α`: the class (in another file) takes an instance
    # argument, so no `Of…` part — what only the whole library tells
    assert named["0A01"] == "Demo.instIsGood" and named["0A02"] == "Demo.instSizeNat"
    assert {named["0A01"], named["0A02"]} <= mathlib
    assert (scanned, missing) == (1, 0)


def test_instances_named_by_the_mathlib_import_in_the_store(sqlite_store, monkeypatch) -> None:
    """With the Mathlib import of the same pin in the store, a tagged anonymous instance takes
    the name of its mention there (by module and line), and the library is not read again."""
    import math2.importers.stacks as stacks
    from math2.importers.registry import load_builtin_importers

    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    load_builtin_importers()["mathlib"].run(sqlite_store, manifest.get("mathlib"), STACKSPROJ)

    def read_again(*_args: object) -> None:
        raise AssertionError("the whole library was read again")

    monkeypatch.setattr(stacks, "_name_instances", read_again)
    import_stacks(sqlite_store, manifest.get("stacks-mathlib"), STACKSPROJ)
    with sqlite_store.session() as s:
        rows = {s.get(Node, r.node_id).key: r.target for r in s.scalars(select(Crosswalk))}
        instances = set(s.scalars(select(Mention.name).where(Mention.kind == "instance")))
    assert rows["stacks:0A01"] == "Demo.instIsGood" and rows["stacks:0A02"] == "Demo.instSizeNat"
    assert {rows["stacks:0A01"], rows["stacks:0A02"]} <= instances
    # without the Mathlib import, the library is read (and the guard above would fail)
    with pytest.raises(AssertionError, match="read again"):
        stacks_pairs(STACKSPROJ, lambda where: {})


def test_attribute_commands_are_read() -> None:
    pairs, _, _ = stacks_pairs(STACKSPROJ)
    got = {t: (d, extra) for t, d, extra in pairs}
    assert got["00PM"][0] == "Demo.size_eq"  # `attribute [stacks 00PM "…"] Demo.size_eq`
    assert got["00PN"][0] == "Demo.other_eq"  # inside `namespace Demo`: `other_eq`
    assert got["00PM"][1] == {"module": "Mathlib.Demo.Stacks", "line": 18, "by": "attribute"}
    assert "tagged after the fact" not in str(pairs)  # the comment is not copied
    # a name `@[mk_iff]` makes: in the namespace of the declaration before, and said so
    assert got["00PQ"] == (
        "Demo.isFinite_iff",
        {"module": "Mathlib.Demo.Stacks", "line": 29, "by": "attribute", "name_from": "namespace"},
    )


def test_the_build_names_the_variable_the_folder_came_from(tmp_path: Path) -> None:
    from math2.config import load_settings
    from math2.importers.registry import load_builtin_importers
    from math2.importers.supply import supply

    entry = load_manifest(REPO / "manifests" / "sources.yaml").get("stacks-mathlib")
    spec = load_builtin_importers()["stacks-mathlib"]
    for field in ("stacks_dir", "mathlib_dir"):
        settings = load_settings(data={field: str(STACKSPROJ), "cache_dir": str(tmp_path)})
        got = supply(settings, entry, spec, offline=True, say=print)
        assert got.path == STACKSPROJ
        assert got.how == f"from {STACKSPROJ} (a local copy: MATH2_DATA__{field.upper()})"


def test_stacks_pairs_carry_mathlibs_licence() -> None:
    entry = load_manifest(REPO / "manifests" / "sources.yaml").get("stacks-mathlib")
    mathlib = load_manifest(REPO / "manifests" / "sources.yaml").get("mathlib")
    assert entry.licence == mathlib.licence == "Apache-2.0"  # read from Mathlib's source


def test_report_counts_a_source_of_candidates_only(sqlite_store) -> None:
    from math2.report import build_report

    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    import_stacks(sqlite_store, manifest.get("stacks-mathlib"), LEANPROJ)
    with sqlite_store.session() as s:
        report = build_report(s)
    row = next(r for r in report.sources if r.name == "stacks-mathlib")
    assert (row.mentions_active, row.crosswalk_candidates) == (0, 1) and row.holds_anything
    assert "stacks-mathlib" not in report.empty_sources  # not "nothing in the store yet"
    assert "mathlib" in report.empty_sources
