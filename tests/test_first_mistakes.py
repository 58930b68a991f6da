"""A newcomer's first mistakes, each one line naming what is wrong (issue 46 §3): a configured
folder that does not exist, a Mathlib copy that is not a git checkout where the pin is checked,
a data folder that is not there, and `index build --limit` over a fuller index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.store import Mention, open_store

FIXTURE = Path(__file__).parent / "fixtures" / "leanproj"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_DATA__CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.delenv("MATH2_DATA__DIR", raising=False)
    # a fetch (were the configured copy passed over) goes nowhere: tests never reach a network
    monkeypatch.setenv("MATH2_DATA__MATHLIB_URL", f"file://{tmp_path}/no-mirror")
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    return tmp_path


def _error(res) -> str:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    text = " ".join(res.stderr.split())  # rich wraps long lines
    assert text.startswith("error: ") and text.count("error:") == 1, res.stderr
    return text


def test_a_mistyped_mathlib_dir_is_named(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typo = env / "mathlib4-typo"
    monkeypatch.setenv("MATH2_DATA__MATHLIB_DIR", str(typo))
    text = _error(CliRunner().invoke(app, ["import", "mathlib"]))
    assert f"MATH2_DATA__MATHLIB_DIR={typo} does not exist" in text, text


def test_a_mathlib_copy_without_git_is_refused_naming_the_folder(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = env / "mathlib-copy"
    shutil.copytree(FIXTURE, copy)
    assert not (copy / ".git").exists()
    monkeypatch.setenv("MATH2_DATA__MATHLIB_DIR", str(copy))
    text = _error(CliRunner().invoke(app, ["import", "mathlib"]))
    assert f"MATH2_DATA__MATHLIB_DIR={copy} is not a git checkout (no .git)" in text, text
    assert "pinned commit" in text
    # nothing was imported under the pin's name
    store = open_store(f"sqlite:///{env / 'c.db'}")
    try:
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(Mention)) == 0
    finally:
        store.close()


def test_a_mistyped_data_dir_is_named(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typo = env / "shared-dta"
    monkeypatch.setenv("MATH2_DATA__DIR", str(typo))
    from math2.config import load_settings
    from math2.data.sets import DataMissing, locate

    with pytest.raises(DataMissing) as info:
        locate(load_settings(), "fate-m")
    assert f"MATH2_DATA__DIR={typo}, which does not exist" in str(info.value)


def test_index_build_limit_never_replaces_a_fuller_index(env: Path) -> None:
    meta = env / "index" / "mathlib" / "meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"count": 280002}))
    before = meta.read_bytes()
    text = _error(CliRunner().invoke(app, ["index", "build", "--limit", "100", "--no-dense"]))
    assert "--limit 100 would replace the index of 280002 declarations" in text, text
    assert "MATH2_RETRIEVAL__INDEX_DIR" in text
    assert meta.read_bytes() == before


def test_the_report_does_not_call_a_source_with_candidates_empty(env: Path) -> None:
    from math2.store import Crosswalk, Node, Source

    store = open_store(f"sqlite:///{env / 'c.db'}")
    try:
        with store.session() as s:
            src = s.scalar(select(Source).where(Source.name == "stacks-mathlib"))
            assert src is not None
            node = Node(key="stacks:0001", title="a tag")
            s.add(node)
            s.flush()
            s.add(
                Crosswalk(
                    node_id=node.id, system="lean4", target="Foo.bar", source_id=src.id,
                    status="candidate",
                )
            )  # fmt: skip
    finally:
        store.close()
    res = CliRunner().invoke(app, ["report"])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.stdout.split())
    empty = flat.split("sources with nothing in the store yet")[1].split("nodes:")[0]
    assert "stacks-mathlib" not in empty, empty
    assert "1000-plus" in empty, empty  # the list itself is there
