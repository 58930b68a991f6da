"""The manifest of external data (data/external.yaml): the repository carries only what math2
wrote under data/ — no tracked file anywhere is one of the manifest's files — and every set names
its origin, its pin, its licence and the SHA-256 of every file."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from math2.data import load_external, manifest_path
from math2.errors import InputError
from tests.conftest import REPO
from tests.data.helpers import manifest, pages_set

# The layout of a data folder (MATH2_DATA__DIR, the data cache, ../shared/data in CI).
LAYOUT = {
    "lean-repl-transcripts": "lean-repl-transcripts",
    "1000-plus": "crosswalk/1000-plus",
    "mathlib-docs": "crosswalk/mathlib-docs",
    "fate-m": "benchmarks",
    "checks-dev": "checks-dev",
}


def _tracked() -> list[str]:
    res = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True
    )
    files = [f for f in res.stdout.decode().split("\0") if f]
    assert len(files) > 500, "not a git checkout of math2?"
    return files


def test_data_holds_only_what_math2_wrote() -> None:
    ext = load_external()
    assert manifest_path() == REPO / "data" / "external.yaml"
    tracked = _tracked()
    assert sorted(f for f in tracked if f.startswith("data/")) == [
        "data/README.md",
        "data/external.yaml",
    ]
    listed = {f"data/{ds.folder}/{f.path}" for ds in ext.sets for f in ds.files}
    assert not listed & set(tracked)
    # nor is any of their files tracked elsewhere (a fixture is written for math2, not copied)
    hashes = {f.sha256 for ds in ext.sets for f in ds.files}
    copies = []
    for name in tracked:
        path = REPO / name
        is_file = path.is_file() and not path.is_symlink()
        if is_file and hashlib.sha256(path.read_bytes()).hexdigest() in hashes:
            copies.append(name)
    assert copies == []


def test_every_set_names_its_origin_pin_licence_and_files() -> None:
    ext = load_external()
    assert {ds.name: ds.folder for ds in ext.sets} == LAYOUT
    for ds in ext.sets:
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", ds.repository), ds.name
        assert re.fullmatch(r"[0-9a-f]{40}", ds.commit) and ds.licence and ds.files, ds.name
        assert len({f.path for f in ds.files}) == len(ds.files), ds.name
    counts = {ds.name: len(ds.files) for ds in ext.sets}
    assert counts["lean-repl-transcripts"] >= 140 and counts["1000-plus"] == 1201
    assert [f.path for f in ext.get("fate-m").files] == ["fate_m.json"]
    assert [f.path for f in ext.get("checks-dev").files] == ["pairs.jsonl"]
    assert ext.get("checks-dev").made_by == "benchmarks/mine_checks_dev.py"
    assert (REPO / "benchmarks" / "mine_checks_dev.py").is_file()


def test_mathlibs_lists_are_pinned_where_mathlib_is() -> None:
    sources = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    mathlib = next(s for s in sources["sources"] if s["name"] == "mathlib")
    ds = load_external().get("mathlib-docs")
    assert ds.commit == mathlib["pins"][-1]["commit"] and ds.checkout_of == "mathlib"


def test_the_readme_names_every_set_with_its_pin() -> None:
    text = (REPO / "data" / "README.md").read_text(encoding="utf-8")
    for ds in load_external().sets:
        assert f"`{ds.name}`" in text and ds.commit in text, ds.name
        assert ds.repository.removeprefix("https://github.com/") in text, ds.name


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"commit": "f4a7505"}, "full 40-hex commit"),
        ({"files": {"a.md": {"sha256": "abc", "from": "a.md"}}}, "not a SHA-256"),
        ({"files": {"../a.md": {"sha256": "0" * 64, "from": "a.md"}}}, "inside its set"),
        ({"files": {}}, "lists no file"),
    ],
)
def test_a_broken_manifest_names_its_file(tmp_path: Path, change: dict, reason: str) -> None:
    path = manifest(tmp_path / "external.yaml", [{**pages_set("https://x", "a" * 40), **change}])
    with pytest.raises(InputError, match=reason) as info:
        load_external(path)
    assert info.value.path.endswith("external.yaml") and "pages" in str(info.value)
