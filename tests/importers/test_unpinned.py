"""A source the manifest gives no pin: `math2 import` and `math2 build` say what to add to the
manifest (the entry, by file and line) and which command to run then — not only that it has no
pin."""

from __future__ import annotations

from pathlib import Path

from math2.build import BuildSummary, build
from math2.config import load_settings
from tests.build_helpers import assert_clean_error, math2, small_manifest, user_env


def test_import_of_an_unpinned_source_names_the_entry_and_the_command(tmp_path: Path) -> None:
    manifest = small_manifest(tmp_path, keep=("herald", "setmm"))
    line = manifest.read_text().splitlines().index("- name: herald") + 1
    copy = tmp_path / "herald.jsonl"  # a local copy, as docs/configuration.md documents
    copy.write_text('{"id": 1, "informal_statement": "x", "formal_statement": "theorem a"}\n')
    env = user_env(tmp_path, MATH2_MANIFEST=str(manifest))
    assert math2(["init"], env, tmp_path).returncode == 0
    res = math2(["import", "herald", str(copy)], env, tmp_path)
    assert_clean_error(res, f"{manifest}:{line}", "pins: [{commit: REVISION}]")
    text = " ".join(res.stderr.split())
    assert "`math2 import herald FILE`" in text and "Hugging Face revision" in text
    assert "has no pin in the manifest; it cannot be imported" not in text


def test_build_skip_reason_is_written_for_its_user(tmp_path: Path, sqlite_store) -> None:
    manifest = small_manifest(tmp_path, keep=("frenzymath-mathlib-informal",))
    settings = load_settings(manifest=str(manifest), data={"cache_dir": str(tmp_path / "c")})
    summary: BuildSummary = build(settings, sqlite_store, offline=True)
    [out] = summary.outcomes
    assert out.status == "skipped", out
    assert out.reason.startswith("not pinned (No revision of the dataset recorded yet; its"), out
    assert f"{manifest}:1" not in out.reason and str(manifest) in out.reason
    assert "`math2 import frenzymath-mathlib-informal FILE`" in out.reason
    assert "machine" not in out.reason
