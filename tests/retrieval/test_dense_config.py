"""Which indexes get the dense part: `retrieval.dense_libraries`, the former `dense_in_build`,
and an encoder that cannot run (a line saying so, the lexical index built all the same)."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from math2.config import RetrievalSettings, Settings
from math2.retrieval import encoder as enc_mod
from math2.retrieval.index import SearchIndex


def test_dense_libraries_and_the_former_key() -> None:
    assert RetrievalSettings().dense_libraries == []
    assert RetrievalSettings(dense_in_build=True).dense_libraries == ["mathlib"]
    assert RetrievalSettings(dense_in_build=False).dense_libraries == []
    kept = RetrievalSettings(dense_in_build=True, dense_libraries=["setmm"])
    assert kept.dense_libraries == ["setmm"]
    with pytest.raises(ValidationError):
        RetrievalSettings(encoder="nope")
    assert enc_mod.unavailable("nope") == "unknown encoder 'nope': one of bge-small, minilm"


def test_build_says_why_no_dense_part(store, tmp_path: Path, monkeypatch) -> None:
    from math2.build import _index_steps

    monkeypatch.setattr(enc_mod, "unavailable", lambda name: "the weights are not installed")
    settings = Settings(
        db_url=store.url,
        retrieval=RetrievalSettings(index_dir=tmp_path / "ix", dense_libraries=["mathlib"]),
    )
    steps = dict(_index_steps(settings, store, ["mathlib"], lambda _m: None))
    assert "no dense embeddings: the weights are not installed" in steps["search index mathlib"]
    ix = SearchIndex(tmp_path / "ix" / "mathlib")
    assert not ix.has_dense and ix.search("identity function", k=1)


def test_index_build_from_config_says_why_no_dense_part(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from math2.cli import app

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("MATH2_RETRIEVAL__DENSE_LIBRARIES", '["mathlib"]')
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    assert CliRunner().invoke(app, ["import", "mathlib", str(fixture)]).exit_code == 0
    monkeypatch.setattr(enc_mod, "unavailable", lambda name: "the weights are not installed")
    res = CliRunner().invoke(app, ["index", "build"])
    assert res.exit_code == 0, res.output
    assert "no dense part: the weights are not installed" in res.stderr
    assert "no dense part" in res.output and "Traceback" not in res.output
