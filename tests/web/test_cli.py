"""`math2 reviewers add` and `math2 serve --add-reviewer`: accounts from the command line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from math2.cli import app
from math2.store import open_store
from math2.web import authenticate


def test_reviewer_accounts_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0  # only init creates
    res = CliRunner().invoke(
        app, ["--db", db, "reviewers", "add", "carol", "--password-stdin"], input="a long secret\n"
    )
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        app,
        ["--db", db, "serve", "--add-reviewer", "dave", "--password-stdin"],
        input="another one\n",
    )
    assert res.exit_code == 0, res.output
    store = open_store(db)
    assert authenticate(store, "carol", "a long secret") == "carol"
    assert authenticate(store, "dave", "another one") == "dave"
    res = CliRunner().invoke(
        app, ["--db", db, "reviewers", "add", "erin", "--password-stdin"], input="short\n"
    )
    assert res.exit_code == 2 and "at least 8" in res.output
    assert authenticate(store, "erin", "short") is None
    store.close()
