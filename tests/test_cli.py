"""The CLI: every command has help; build runs end to end on an empty machine."""

import shutil
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from math2.cli import app


def _commands(cmd, prefix=()):
    yield prefix
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*prefix, name))


@pytest.mark.parametrize("path", list(_commands(get_command(app))), ids=" ".join)
def test_every_command_has_help(path) -> None:
    res = CliRunner().invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


def test_build_reports_what_it_skipped_and_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    res = CliRunner().invoke(app, ["build", "--offline"])  # tests never reach the internet
    assert res.exit_code == 3, res.output  # no Mathlib, the main library
    assert "skipped  mathlib" in res.output and "not fetched (--offline)" in res.output
    flat = " ".join(res.output.split())  # rich wraps the long lines
    line = flat[flat.index("skipped 1000-plus") :][:400]
    assert "not fetched (--offline)" in line and "math2 data fetch 1000-plus" in line, line
    assert "MATH2_DATA__DIR" in line
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("math2 build: ") and "exit 3: the corpus lacks mathlib" in last
    assert "skipped  mathpile" in res.output
    assert "class exclude" in res.output
    assert "skipped  minif2f" in res.output and "evaluation only" in res.output
    assert "open questions (K15)" in res.output
    again = CliRunner().invoke(app, ["report"])
    assert again.exit_code == 0, again.output


def test_report_on_an_uninitialised_store_says_to_init(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    res = CliRunner().invoke(app, ["report"])
    assert res.exit_code == 2
    assert "math2 init" in res.output


def test_import_and_crosswalk_commands(tmp_path: Path, monkeypatch) -> None:
    from tests.conftest import FIXTURES

    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    lists = FIXTURES / "lists"
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    res = CliRunner().invoke(app, ["crosswalk", "import", "1000-plus", str(lists / "1000-plus")])
    assert res.exit_code == 0, res.output
    assert "entries: 5" in res.output and "clustering" in res.output
    res = CliRunner().invoke(app, ["import", "mathlib-theorem-lists", str(lists / "mathlib-docs")])
    assert res.exit_code == 0, res.output
    again = CliRunner().invoke(
        app, ["import", "mathlib-theorem-lists", str(lists / "mathlib-docs")]
    )
    assert "already imported at this pin" in again.output
    bad = CliRunner().invoke(app, ["import", "mathpile"])
    assert bad.exit_code == 2 and "no importer" in bad.stderr
    missing = CliRunner().invoke(app, ["import", "setmm", str(tmp_path / "nope.mm")])
    assert missing.exit_code == 2 and "nope.mm" in missing.stderr


def test_bump_refuses_a_pin_that_is_not_in_the_manifest(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    res = CliRunner().invoke(app, ["bump", "mathlib", "--to", "deadbeef", str(tmp_path)])
    assert res.exit_code == 2 and "record the new pin there first" in res.stderr


def test_bump_and_select_on_the_fixture(tmp_path: Path, monkeypatch) -> None:
    fixture = Path(__file__).parent / "fixtures" / "leanproj"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    res = CliRunner().invoke(
        app, ["bump", "mathlib", "--to", "f4a75053ba65be55859c28f56b58c48ddff8db5f", str(fixture)]
    )
    assert res.exit_code == 0, res.output
    assert "mentions added: 20" in res.output
    res = CliRunner().invoke(app, ["select", "--request", "Demo.idf_apply"])
    assert res.exit_code == 0, res.output
    assert "statement_definitions: 1" in res.output


def test_index_build_and_search(tmp_path: Path, monkeypatch) -> None:
    fixture = Path(__file__).parent / "fixtures" / "leanproj"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    res = CliRunner().invoke(app, ["search", "anything"])
    assert res.exit_code == 2 and "No search index is built" in res.stderr
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    CliRunner().invoke(app, ["import", "mathlib", str(fixture)])
    res = CliRunner().invoke(app, ["index", "build", "--no-dense"])
    assert res.exit_code == 0, res.output
    assert "index of 20 declarations" in res.output
    res = CliRunner().invoke(app, ["search", "idf apply", "-k", "2"])
    assert res.exit_code == 0, res.output
    assert "Demo.idf_apply" in res.output
    assert "searched: mathlib (20 declarations; BM25 + phrases" in res.stderr
    # the fixture's 20 declarations answer too few dev queries to train a ranker: asking for
    # it is one line naming the command, not a silent fusion
    res = CliRunner().invoke(app, ["search", "idf apply", "--ranker"])
    assert res.exit_code == 2 and "no learned ranker in the index of mathlib" in res.stderr
    assert "math2 index build --library mathlib" in res.stderr
    # Mathlib by default; every built index with --library all, each hit with its library
    shutil.copytree(tmp_path / "index" / "mathlib", tmp_path / "index" / "other")
    res = CliRunner().invoke(app, ["search", "idf apply", "-k", "2"])
    assert res.exit_code == 0, res.output
    assert "mathlib (20" in res.stderr and "other (20" not in res.stderr
    res = CliRunner().invoke(app, ["search", "zzqqxx"])
    assert res.exit_code == 0 and "no declaration matches" in res.stderr, res.stderr
    res = CliRunner().invoke(app, ["search", "idf apply", "-k", "2", "--library", "all"])
    assert res.exit_code == 0, res.output
    assert "mathlib (20" in res.stderr and "other (20" in res.stderr
    assert "(other)" in res.output and "(mathlib)" in res.output
    # the dense part: an unknown encoder is refused before anything is built, a known one is
    # used and named by search
    res = CliRunner().invoke(app, ["index", "build", "--encoder", "nope"])
    assert res.exit_code == 2 and "unknown encoder 'nope'" in res.stderr
    res = CliRunner().invoke(app, ["index", "build"])  # the dense part is opt-in
    assert res.exit_code == 0 and "no dense part" in res.output, res.output
    res = CliRunner().invoke(app, ["index", "build", "--dense", "--encoder", "bge-small"])
    assert res.exit_code == 0 and "dense part: bge-small" in res.output, res.output
    res = CliRunner().invoke(app, ["search", "identity function", "--library", "mathlib"])
    assert res.exit_code == 0 and " + dense" in res.stderr, res.stderr
