"""Mathlib into the corpus: lean_scout (both schemas), the source scan, bumps, bad data."""

import shutil
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from math2.errors import InputError
from math2.importers import lean_scout
from math2.importers.lean_source import READER
from math2.importers.mathlib import import_lean_library
from math2.sources import load_manifest, sync_manifest
from math2.store import ConstDep, Mention, Run, TextRecord
from tests.conftest import REPO
from tests.importers.scout_data import scout

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def manifest_with_pins(tmp_path: Path, *commits: str):
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    for s in data["sources"]:
        if s["name"] == "mathlib":
            s["pins"] = [
                {"commit": c, "toolchain": "leanprover/lean4:v4.33.0-rc1"} for c in commits
            ]
    path = tmp_path / f"sources-{len(commits)}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_manifest(path)


@pytest.fixture
def corpus(sqlite_store):
    return sqlite_store


def sync(store, manifest):
    with store.session() as s:
        sync_manifest(s, manifest)
    return manifest.get("mathlib")


def count(store, model, *where):
    with store.session() as s:
        q = select(func.count()).select_from(model)
        for w in where:
            q = q.where(w)
        return s.scalar(q)


@pytest.mark.parametrize("old_schema", [False, True])
def test_lean_scout_readers(tmp_path: Path, old_schema: bool) -> None:
    root = scout(tmp_path, old_schema=old_schema)
    rows = list(lean_scout.read_types(root / "mathlib-types"))
    assert len(rows) == 6
    assert (rows[0].allow_completion is None) is old_schema
    tactics = list(lean_scout.read_tactics(root / "mathlib-tactics"))
    assert tactics[0].tactic == "rfl" and tactics[0].used_constants == ["Eq", "Nat"]
    assert (tactics[0].goals_after is None) is old_schema
    assert (tactics[0].line is None) is old_schema


def test_lean_scout_import_with_the_three_counts(corpus, tmp_path: Path) -> None:
    entry = sync(corpus, manifest_with_pins(tmp_path, "aaa"))
    res = import_lean_library(corpus, entry, scout(tmp_path / "scout"))
    c = res.counts
    assert c["all constants (every row of mathlib-types)"] == 6
    assert c["constants a user can complete (allowCompletion = true; the mentions)"] == 4
    assert c["named theorems and definitions (completable, in Mathlib's own modules)"] == 3
    assert c["tactic invocations (mathlib-tactics)"] == 1
    assert count(corpus, Mention) == 4 and count(corpus, ConstDep) == 3
    with corpus.session() as s:
        t = s.scalar(
            select(TextRecord)
            .join(Mention, TextRecord.mention_id == Mention.id)
            .where(Mention.name == "Nat.add_comm")
        )
        assert (
            t.licence == "Apache-2.0" and "Mathlib" in t.attribution and t.author_kind == "person"
        )


def test_truncated_parquet_imports_nothing(corpus, tmp_path: Path) -> None:
    entry = sync(corpus, manifest_with_pins(tmp_path, "aaa"))
    root = scout(tmp_path / "scout")
    shard = sorted((root / "mathlib-types").glob("*.parquet"))[-1]
    shard.write_bytes(shard.read_bytes()[:40])
    with pytest.raises(InputError) as info:
        import_lean_library(corpus, entry, root)
    assert info.value.path == str(shard) and "parquet" in info.value.reason
    assert count(corpus, Mention) == 0 and count(corpus, Run) == 0


def test_wrong_dataset_is_named(tmp_path: Path) -> None:
    root = scout(tmp_path)
    with pytest.raises(InputError, match="missing columns"):
        list(lean_scout.read_types(root / "mathlib-const-dep"))


def test_checkout_scan_import(corpus, tmp_path: Path) -> None:
    entry = sync(corpus, manifest_with_pins(tmp_path, "aaa"))
    res = import_lean_library(corpus, entry, FIX)
    assert res.counts["named, unique"] == 20 and res.counts["module-doc main results"] == 1
    with corpus.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Demo.add_comm'"))
        assert (m.kind, m.module, m.licence, m.intake_class) == (
            "theorem",
            "Mathlib.Algebra.Demo",
            "Apache-2.0",
            "open_text",
        )
        assert m.extra["main_result"] is True and m.extra["statement_hash"]
        assert m.type_hash is None  # a source statement is not an elaborated type
    again = import_lean_library(corpus, entry, FIX)
    assert again.skipped_already_done


def test_a_newer_reader_reads_the_same_checkout_again(corpus, tmp_path: Path) -> None:
    # a store imported by an older math2 (its scanner recorded no bodies) is not "already
    # imported": the same checkout is read again and replaces it, in one transaction
    entry = sync(corpus, manifest_with_pins(tmp_path, "aaa"))
    first = import_lean_library(corpus, entry, FIX)
    with corpus.session() as s:
        run = s.scalar(select(Run).where(Run.key.like("mathlib@%")))
        digest = run.params["digest"]
        assert digest.endswith(f"; read by {READER}")
        run.params = {**run.params, "digest": digest.split("; read by ")[0]}  # before readers
    again = import_lean_library(corpus, entry, FIX)
    assert not again.skipped_already_done
    assert again.counts["named, unique"] == first.counts["named, unique"]
    assert count(corpus, Mention, Mention.name == "Demo.add_comm'") == 1
    with corpus.session() as s:
        run = s.scalar(select(Run).where(Run.key.like("mathlib@%")))
        assert run.params["digest"] == digest
    assert import_lean_library(corpus, entry, FIX).skipped_already_done


def test_bump_new_retired_renamed_and_changed(corpus, tmp_path: Path) -> None:
    entry = sync(corpus, manifest_with_pins(tmp_path, "aaa"))
    import_lean_library(corpus, entry, FIX)
    before = count(corpus, Mention, Mention.status == "active")
    # The library moves on: a new theorem, a removed one, a rename with an alias, a new type.
    new = tmp_path / "next"
    shutil.copytree(FIX, new)
    demo = new / "Mathlib/Algebra/Demo.lean"
    text = demo.read_text()
    text = text.replace("theorem uses_char : 'a' ≠ 'b' := by decide\n", "")
    text = text.replace(
        "theorem _root_.root_level (n : ℕ) : n = n := rfl",
        "theorem _root_.root_level (n : ℕ) : n + 0 = n := rfl",
    )
    text = text.replace("lemma two_eq :", "lemma two_eq' :").replace(
        "alias two_eq_old := two_eq",
        "alias two_eq_old := two_eq'\n"
        '@[deprecated (since := "2026-03-03")] alias two_eq := two_eq\'',
    )
    text = text.replace("end Demo", "theorem brand_new : 1 = 1 := rfl\n\nend Demo")
    demo.write_text(text)
    entry2 = sync(corpus, manifest_with_pins(tmp_path, "aaa", "bbb"))
    res = import_lean_library(corpus, entry2, new)
    c = res.counts
    assert c["mentions retired"] == 3  # uses_char removed, root_level changed, two_eq renamed
    assert c["mentions added"] == 4  # brand_new, two_eq', root_level (new type), two_eq alias
    assert c["bump: change in active mentions"] == 1
    with corpus.session() as s:
        gone = s.scalar(select(Mention).where(Mention.name == "Demo.uses_char"))
        assert gone.status == "retired" and gone.successor is None
        renamed = s.scalar(
            select(Mention).where(Mention.name == "Demo.two_eq", Mention.kind == "lemma")
        )
        assert renamed.status == "retired" and renamed.successor == "two_eq'"
        changed = s.scalars(select(Mention).where(Mention.name == "root_level")).all()
        assert sorted(m.status for m in changed) == ["active", "retired"]
        kept = s.scalar(select(Mention).where(Mention.name == "Demo.add_comm'"))
        assert kept.status == "active" and kept.successor is None
        bump = s.scalar(select(Run).where(Run.job == "bump"))
        assert bump.key == "mathlib@bbb" and bump.stats["bump: mention rows now"] == before + 4
    assert count(corpus, Mention, Mention.status == "active") == before + 1
