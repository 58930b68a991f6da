"""`math2 formalize` as a user runs it, with the fakes: its last line counts every outcome (a
refusal and a miss are failures) and names the Lean behind the verdicts — a double says so."""

from __future__ import annotations

from pathlib import Path

from math2.cli import app
from math2.llm.testing import FakeServer
from tests.roles.formalize.scripts import formalize_script, write_items
from tests.settings import REPL_RULES, cli_env


def test_the_last_line_counts_outcomes_and_names_the_lean(tmp_path: Path, monkeypatch) -> None:
    inp = tmp_path / "in.jsonl"
    write_items(inp)
    with FakeServer(formalize_script()) as srv:
        runner = cli_env(
            tmp_path, monkeypatch, srv.base_url, models=("gen", "judge"), rules=REPL_RULES
        )
        args = ["formalize", str(inp), "--model", "gen", "--judge", "judge", "--no-retrieval"]
        res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in res.stdout.splitlines() if "formalized this time" in ln]
    # alpha, beta and gamma pass in rounds 1, 2 and 3; delta never compiles and zeta's judge
    # cannot be read (failed); epsilon's every block is refused by hygiene
    assert line.startswith(
        "run 1: 6 formalized this time (3 passed — round 1: 1, round 2: 1, round 3: 1; "
        "3 failed: failed 2, refused 1), 0 stopped by an exception, 0 already finished; "
        "compiled by: fake-repl · Lean fake-repl "
    ), line
    assert line.endswith("— a test double, not Lean"), line
