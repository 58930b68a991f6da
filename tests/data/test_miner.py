"""The checks-dev miner (benchmarks/mine_checks_dev.py) on a history written for the tests: a fix
commit gives a before (unfaithful) and an after (faithful) pair of each statement it changed,
whole (a `let … :=` inside a statement does not end it), and nothing for a statement it only
reformatted; unchanged theorems of the file are faithful pairs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.data.helpers import commit

MINER = REPO / "benchmarks" / "mine_checks_dev.py"

BEFORE = """import Mathlib

/-- Every natural number `n` with `n ≥ 1` has a successor larger than `n` itself. -/
theorem succ_gt (n : ℕ) :
    let m := n + 1
    n < m := by
  sorry

/-- The square of any real number is never negative, whatever the real number is. -/
theorem sq_nonneg' (x : ℝ) : 0 ≤ x ^ 2 := by
  sorry

/-- Two plus two is four in the natural numbers, as everyone has known forever. -/
theorem two_two : 2 + 2 = 4 := by
  sorry

/-- For every positive real number there is a smaller positive real number still. -/
theorem exists_smaller (x : ℝ) : ∃ y : ℝ, 0 < y ∧ y < x := by
  sorry
"""

AFTER = (
    BEFORE.replace(
        "theorem exists_smaller (x : ℝ) : ∃ y : ℝ, 0 < y ∧ y < x := by",
        "theorem exists_smaller (x : ℝ) (hx : 0 < x) : ∃ y : ℝ, 0 < y ∧ y < x := by",
    )
    .replace(
        "    let m := n + 1\n    n < m := by",
        "    let m := n + 2\n    n < m := by",
    )
    .replace(
        "theorem sq_nonneg' (x : ℝ) : 0 ≤ x ^ 2 := by",
        "theorem sq_nonneg' (x : ℝ) :\n    0 ≤ x ^ 2 := by",  # a reformatting only
    )
)


def HISTORY(repo: Path) -> tuple[Path, str]:
    """A formal-conjectures-shaped history: problems added, then one statement fix."""
    commit(repo, {"FormalConjectures/Demo.lean": BEFORE}, "add demo problems")
    commit(repo, {"FormalConjectures/Demo.lean": AFTER}, "fix: missing positivity assumption")
    pin = commit(repo, {"README.md": "demo\n"}, "chore: bump toolchain")
    return repo, pin


def mine_direct(repo: Path, out: Path) -> bytes:
    subprocess.run(
        [sys.executable, str(MINER), str(repo / ".git"), str(out)], check=True, capture_output=True
    )
    return out.read_bytes()


def test_pairs_are_whole_statements_and_reformattings_give_none(tmp_path: Path) -> None:
    repo, _ = HISTORY(tmp_path / "fc")
    rows = [json.loads(x) for x in mine_direct(repo, tmp_path / "p.jsonl").splitlines()]
    by_id = {r["id"].split("/", 2)[2]: r for r in rows}
    assert set(by_id) == {
        "exists_smaller/before",
        "exists_smaller/after",
        "succ_gt/before",
        "succ_gt/after",
        "two_two/unchanged",
    }, sorted(by_id)
    before, after = by_id["exists_smaller/before"], by_id["exists_smaller/after"]
    assert (before["faithful"], after["faithful"]) == (False, True)
    assert before["error_types"] == ["missing_precondition"] and after["error_types"] == []
    assert "(hx : 0 < x)" in after["formal"] and "(hx : 0 < x)" not in before["formal"]
    # the whole statement: the `let … :=` inside it does not end it
    assert by_id["succ_gt/after"]["formal"] == (
        "theorem succ_gt (n : ℕ) :\n    let m := n + 2\n    n < m := by\n  sorry"
    )
    assert "n + 1" in by_id["succ_gt/before"]["formal"]
    assert by_id["two_two/unchanged"]["faithful"] is True
    assert all(r["informal"].startswith(("Every", "For every", "Two")) for r in rows)
