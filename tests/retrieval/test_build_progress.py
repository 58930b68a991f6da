"""The index build without a terminal: a line when each stage ends (its count and time), a line
every interval while one runs (count, share, ETA), through `math2.util.progress`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from math2.retrieval import parts as index_build
from math2.retrieval.index import build_index
from math2.util.progress import LineReporter, reporting

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"
COUNTED = ("words", "phrases", "prior's edges")


def _build(store, out: Path, every_s: float) -> tuple[dict, list[str]]:
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=every_s)):
        meta = build_index(store, out, "mathlib", mathlib_dir=FIX)
    return meta, lines


# the build reads the store without SQLAlchemy's deprecated `Result.tuples()` (2.1)
@pytest.mark.filterwarnings("error::sqlalchemy.exc.SADeprecationWarning")
def test_each_stage_of_the_build_ends_with_a_line_of_its_count(store, tmp_path: Path) -> None:
    meta, lines = _build(store, tmp_path / "index", every_s=3600)
    n = meta["count"]
    assert n > 5
    ends = {t.split(": ")[1]: t for t in lines}
    assert all(t.startswith("index mathlib: ") for t in lines), lines
    assert re.fullmatch(
        rf"index mathlib: read declarations: {n} declarations in \d+s", ends["read declarations"]
    )
    files = ends["main results in module docstrings"]
    assert re.fullmatch(
        r"index mathlib: main results in module docstrings: (\d+)/\1 files \(100%\) in \d+s", files
    ), files
    for name in COUNTED:
        assert re.fullmatch(
            rf"index mathlib: {re.escape(name)}: {n}/{n} declarations \(100%\) in \d+s", ends[name]
        ), ends[name]
    # bm25s counts nothing inside: the time, and how many documents it indexed
    for part in ("BM25 over words", "BM25 over phrases"):
        assert re.fullmatch(rf"index mathlib: {part}: done in \d+s · {n} documents", ends[part]), (
            ends[part]
        )
    assert re.fullmatch(
        r"index mathlib: PageRank prior: \d+/50 iterations \(\d+%\) in \d+s", ends["PageRank prior"]
    )
    # one line per stage, nothing else (an interval this long lets no running line through)
    assert len(lines) == len(ends)


def test_a_running_stage_prints_its_count_share_and_eta(store, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(index_build, "BATCH", 2)  # a count every 2 declarations
    meta, lines = _build(store, tmp_path / "index", every_s=0.0)
    n = meta["count"]
    running = [t for t in lines if t.startswith("index mathlib: words: ") and " in " not in t]
    assert running, lines
    assert [int(re.search(r"words: (\d+)/", t)[1]) for t in running] == list(range(2, n, 2))
    assert all(re.search(rf"/{n} declarations \(\d+%\) · \d+s · ETA \d+s$", t) for t in running)
    # the build under a reporter is the build without one: the same index
    with reporting(None):
        quiet = build_index(store, tmp_path / "quiet", "mathlib", mathlib_dir=FIX)
    assert {k: v for k, v in quiet.items() if k != "built_at"} == {
        k: v for k, v in meta.items() if k != "built_at"
    }


def test_math2_index_build_not_on_a_terminal_prints_the_stage_lines(tmp_path, monkeypatch) -> None:
    """`math2 index build` with stderr not a terminal (CliRunner): the stages' lines on
    stderr, beside the command's own report."""
    from typer.testing import CliRunner

    from math2.cli import app

    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    r = (
        CliRunner(mix_stderr=False)
        if "mix_stderr" in CliRunner.__init__.__code__.co_varnames
        else CliRunner()
    )
    assert r.invoke(app, ["init"]).exit_code == 0
    assert r.invoke(app, ["import", "mathlib", str(FIX)]).exit_code == 0
    res = r.invoke(app, ["index", "build", "--no-dense"])
    assert res.exit_code == 0, res.output
    shown = [t for t in res.stderr.splitlines() if t.startswith("index mathlib: ")]
    names = [t.split(": ")[1] for t in shown]
    for name in ("read declarations", *COUNTED, "BM25 over words", "PageRank prior"):
        assert name in names, res.stderr
    words = shown[names.index("words")]
    assert re.fullmatch(r"index mathlib: words: (\d+)/\1 declarations \(100%\) in \d+s", words)
    assert "\x1b[" not in res.stderr  # plain lines, no terminal codes
