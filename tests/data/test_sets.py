"""Where an external data set is: MATH2_DATA__DIR, else the data cache; every file hash-checked;
a set that is nowhere is one line naming the setting and the fetch command (exit 2, never a
traceback); a file whose hash differs is refused with the file and both hashes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from math2.config import load_settings
from math2.data import DataMismatch, DataMissing, Origin, locate, status
from tests.build_helpers import math2, user_env
from tests.data.helpers import PAGES, manifest, pages_set, sha

PIN = "a" * 40


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A data folder holding the set, as a user names it with MATH2_DATA__DIR."""
    root = tmp_path / "given"
    for p, text in PAGES.items():
        (root / "thm" / "pages" / p.removeprefix("lists/")).parent.mkdir(
            parents=True, exist_ok=True
        )
        (root / "thm" / "pages" / p.removeprefix("lists/")).write_text(text)
    return root


def _settings(tmp_path: Path, **data):
    m = manifest(tmp_path / "external.yaml", [pages_set("https://example.org/r.git", PIN)])
    return load_settings(data={"external": m, "cache_dir": tmp_path / "cache", **data})


def test_a_given_folder_is_read_when_every_file_checks(tmp_path: Path, folder: Path) -> None:
    settings = _settings(tmp_path, dir=folder)
    assert locate(settings, "pages") == folder / "thm" / "pages"
    [st] = status(settings)
    assert st.ok and st.origin is Origin.DIR and st.commit == PIN and st.licence == "CC0-1.0"


def test_a_file_that_differs_is_refused_with_both_hashes(tmp_path: Path, folder: Path) -> None:
    bad = folder / "thm" / "pages" / "two.md"
    bad.write_text("altered\n")
    settings = _settings(tmp_path, dir=folder)
    with pytest.raises(DataMismatch) as info:
        locate(settings, "pages")
    text = str(info.value)
    assert info.value.path == str(bad)
    assert sha("altered\n") in text and sha(PAGES["lists/two.md"]) in text
    [st] = status(settings)
    assert not st.ok and st.problem and str(bad) in st.problem


def test_a_missing_file_names_the_file(tmp_path: Path, folder: Path) -> None:
    (folder / "thm" / "pages" / "one.md").unlink()
    with pytest.raises(DataMissing, match=r"one\.md is missing.*math2 data fetch pages"):
        locate(_settings(tmp_path, dir=folder), "pages")


def test_a_set_nowhere_says_how_to_get_it(tmp_path: Path) -> None:
    for given in (None, tmp_path / "empty"):
        settings = _settings(tmp_path, dir=given)
        with pytest.raises(DataMissing) as info:
            locate(settings, "pages")
        text = str(info.value)
        assert "\n" not in text
        assert "math2 data fetch pages" in text and "MATH2_DATA__DIR" in text
        assert "thm/pages/" in text
        [st] = status(settings)
        assert st.origin is Origin.NONE and not st.ok


def test_the_cache_counts_only_a_finished_fetch_of_the_pin(tmp_path: Path, folder: Path) -> None:
    settings = _settings(tmp_path)
    cache = tmp_path / "cache" / "data"
    shutil.copytree(folder / "thm", cache / "thm")
    with pytest.raises(DataMissing):  # no stamp: a fetch that did not finish
        locate(settings, "pages")
    (cache / ".fetched").mkdir()
    stamp = cache / ".fetched" / "pages.json"
    stamp.write_text(json.dumps({"commit": "b" * 40, "from": "x"}))
    with pytest.raises(DataMissing):  # another pin's
        locate(settings, "pages")
    stamp.write_text(json.dumps({"commit": PIN, "from": "file:///mirror"}))
    assert locate(settings, "pages") == cache / "thm" / "pages"
    [st] = status(settings)
    assert st.ok and st.origin is Origin.CACHE and st.fetched_from == "file:///mirror"


def test_the_cli_says_where_each_set_is_and_a_missing_one_exits_2(
    tmp_path: Path, folder: Path
) -> None:
    m = manifest(tmp_path / "external.yaml", [pages_set("https://example.org/r.git", PIN)])
    env = user_env(tmp_path, MATH2_DATA__EXTERNAL=str(m))
    res = math2(["data", "status"], env, tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (
        "pages" in res.stdout and "missing" in res.stdout and "math2 data fetch pages" in res.stdout
    )
    env["MATH2_DATA__DIR"] = str(folder)
    res = math2(["data", "status"], env, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (
        "MATH2_DATA__DIR" in res.stdout and "ok, 2 files" in res.stdout and PIN[:12] in res.stdout
    )
    (folder / "thm" / "pages" / "one.md").write_text("changed")
    res = math2(["data", "status"], env, tmp_path)
    assert res.returncode == 2 and sha("changed") in " ".join(res.stdout.split())


def test_a_command_that_needs_a_missing_set_is_one_line_exit_2(tmp_path: Path) -> None:
    """`math2 eval benchmarks` reads FATE-M by default: absent, one line and exit 2."""
    env = user_env(tmp_path)
    res = math2(["eval", "benchmarks"], env, tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    flat = " ".join(res.stderr.split())
    assert len(lines) == 1 and lines[0].startswith("error: data set fate-m"), res.stderr
    assert "math2 data fetch fate-m" in flat and "MATH2_DATA__DIR" in flat


def _mined(tmp_path: Path, made: str, earlier: dict[str, str]) -> Path:
    m = {
        "name": "pairs",
        "title": "pairs a math2 script mines (written for the tests)",
        "repository": "https://example.org/r.git",
        "commit": PIN,
        "licence": "CC0-1.0",
        "folder": "pairs",
        "fetch": "mine",
        "made_by": "benchmarks/mine_checks_dev.py",
        "files": {"pairs.jsonl": {"sha256": sha(made), "earlier": earlier}},
    }
    return manifest(tmp_path / "external.yaml", [m])


def test_an_earlier_making_of_a_mined_file_is_accepted_and_said(tmp_path: Path) -> None:
    # CI's copy of a mined set was made before the script changed: read, and named as such;
    # a file neither making wrote is refused
    root = tmp_path / "given"
    (root / "pairs").mkdir(parents=True)
    (root / "pairs" / "pairs.jsonl").write_text("old\n")
    m = _mined(tmp_path, "new\n", {sha("old\n"): "the miner before the fix"})
    settings = load_settings(data={"external": m, "cache_dir": tmp_path / "c", "dir": root})
    assert locate(settings, "pairs") == root / "pairs"
    [st] = status(settings)
    assert st.ok and st.note and "an earlier making (the miner before the fix)" in st.note
    (root / "pairs" / "pairs.jsonl").write_text("new\n")
    [st] = status(settings)
    assert st.ok and st.note is None
    (root / "pairs" / "pairs.jsonl").write_text("other\n")
    with pytest.raises(DataMismatch):
        locate(settings, "pairs")


def test_only_a_derived_file_has_earlier_makings(tmp_path: Path) -> None:
    from math2.data import load_external
    from math2.errors import InputError

    s = pages_set("https://example.org/r.git", PIN)
    s["files"]["one.md"]["earlier"] = {sha("x"): "an older copy"}
    with pytest.raises(InputError, match="only a file math2 derives has earlier makings"):
        load_external(manifest(tmp_path / "external.yaml", [s]))
