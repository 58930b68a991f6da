"""The one text limit (`input.max_text_chars`) on what `math2 informalize` reads besides the
store: a Lean source folder (`--lean-dir`: each statement and docstring, the error names the
file and the line) and lean_scout tactic data (`--tactics`: each goal state, the error names
the parquet file and the row)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.errors import InputError
from math2.importers.lean_scout import read_tactics
from math2.roles.informalize import decls_from_lean_dir, decls_from_tactics
from math2.store.work import Run
from math2.util.textlimit import DEFAULT_MAX_TEXT_CHARS, set_text_limit

LIMIT = 200
SHORT = "theorem short_one (n : Nat) : n + 0 = n := by simp\n"


@pytest.fixture(autouse=True)
def _default_limit():
    yield
    set_text_limit(DEFAULT_MAX_TEXT_CHARS)


def lean_dir(root: Path, statement: str = "", docstring: str = "") -> Path:
    """`Demo/Long.lean`: a short theorem (lines 1-2), then one whose statement or docstring is
    as given, its `theorem` keyword on line 6."""
    (root / "Demo").mkdir(parents=True)
    doc = f"/-- {docstring} -/\n" if docstring else "\n"
    body = f"namespace Demo\n\n{SHORT}\n{doc}theorem long_one : {statement or 'True'} := trivial\n"
    (root / "Demo" / "Long.lean").write_text(body + "\nend Demo\n")
    return root


def tactics(folder: Path, goals: list[str]) -> Path:
    """One lean_scout tactics shard (the newer schema), a row per goal state."""
    folder.mkdir(parents=True)
    pos = {"line": 3, "column": 2}
    n = len(goals)
    table = pa.table(
        {
            "module": ["Mathlib.Demo"] * n,
            "startPos": [pos] * n,
            "goals": [[{"pp": g, "usedConstants": ["Nat"]}] for g in goals],
            "ppTac": ["simp"] * n,
            "kind": ["Lean.Parser.Tactic.simp"] * n,
        }
    )
    pq.write_table(table, folder / "00000.parquet")
    return folder


def test_a_long_statement_in_a_lean_file_names_the_file_and_line(tmp_path: Path) -> None:
    root = lean_dir(tmp_path / "src", statement="1 + 1 = 2 ∧ " * 40)
    assert len(decls_from_lean_dir(root)) == 2  # within the default limit: both read
    set_text_limit(LIMIT)
    with pytest.raises(InputError) as exc:
        decls_from_lean_dir(root)
    err = exc.value
    assert err.path == str(root / "Demo" / "Long.lean") and err.line == 6
    assert "the statement of Demo.long_one" in err.reason and "max_text_chars" in err.reason


def test_a_long_docstring_in_a_lean_file_is_refused_too(tmp_path: Path) -> None:
    root = lean_dir(tmp_path / "src", docstring="A remark. " * 30)
    set_text_limit(LIMIT)
    with pytest.raises(InputError) as exc:
        decls_from_lean_dir(root)
    assert exc.value.path.endswith("Long.lean") and exc.value.line is not None
    assert "the docstring of Demo.long_one" in exc.value.reason


def test_a_long_goal_state_names_the_parquet_file_and_row(tmp_path: Path) -> None:
    goals = ["n : Nat\n⊢ n + 0 = n", "⊢ 2 = 1 + 1", "x : Nat\n⊢ " + "x + " * 100 + "0 = x"]
    folder = tactics(tmp_path / "mathlib-tactics", goals)
    assert len(decls_from_tactics(read_tactics(folder))) == 3
    set_text_limit(LIMIT)
    with pytest.raises(InputError) as exc:
        decls_from_tactics(read_tactics(folder))
    assert exc.value.path == str(folder / "00000.parquet")
    assert "row 3, goal state 1 is 4" in exc.value.reason, exc.value.reason


def test_informalize_on_a_long_lean_file_exits_with_the_place_and_starts_no_run(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MATH2_INPUT__MAX_TEXT_CHARS", str(LIMIT))
    root = lean_dir(tmp_path / "src", statement="1 + 1 = 2 ∧ " * 40)
    r = CliRunner()
    assert r.invoke(app, ["init"]).exit_code == 0
    res = r.invoke(
        app,
        ["informalize", "--model", "w", "--translator", "t", "--lean-dir", str(root)],
        terminal_width=400,
    )
    assert res.exit_code == 2, res.output
    assert f"{root / 'Demo' / 'Long.lean'}:6" in res.stderr and "Traceback" not in res.output
    from math2.store import Store

    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 0
    store.close()
