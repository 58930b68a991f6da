"""Issue 41, "What it must show", the cases the other tests left out of `math2 lean check`: a
person's context (`open … renaming/hiding`, notation with attributes, shadowing definitions,
instances) refused for a model with nothing reaching the double and passed with its flag for a
person; a `partial def` in a person's context and the legitimate shapes of a model's block
passed with no flag at both levels; `stop` in a type and in a proof refused at both levels and
in both modes before Lean; the same verdicts under `--no-cache`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from tests.lean.conftest import requests
from tests.lean.test_library_tables import FLAGGED, LEGIT
from tests.lean.test_smaller_faults import PARTIAL

STOP_IN_TYPE = "import Mathlib\ntheorem foo : ∀ n : ℕ, n < (by stop exact 0) := by sorry"
STOP_IN_PROOF = "import Mathlib\ntheorem foo : 1 = 1 := by stop rfl"


def _check(env: Path, rows: dict[str, str], *args: str) -> tuple[dict[str, str], dict[str, str]]:
    """(id → pass/FAIL, id → the flag lines under it) of `math2 lean check` over `rows`."""
    f = env / "items.jsonl"
    f.write_text(
        "".join(
            json.dumps({"id": k, "theorem_name": "foo", "code": c}, ensure_ascii=False) + "\n"
            for k, c in rows.items()
        )
    )
    res = CliRunner().invoke(app, ["lean", "check", *args, str(f)])
    assert res.exit_code in (0, 1), res.output
    verdicts: dict[str, str] = {}
    flags: dict[str, str] = {}
    last = ""
    for ln in res.output.splitlines():
        if ln[:4] in ("pass", "FAIL"):
            last = ln.split()[1]
            verdicts[last] = ln.split()[0]
            flags[last] = ""
        elif ln.lstrip().startswith("flag ") and last:
            flags[last] += ln.strip() + "\n"
    return verdicts, flags


def _id(case: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in case)


@pytest.mark.parametrize("cache", ["--cache", "--no-cache"])
def test_a_persons_context_is_refused_for_a_model_and_flagged_for_a_person(
    env: Path, cache: str
) -> None:
    rows = {_id(k): code for k, (code, *_) in FLAGGED.items()}
    verdicts, _ = _check(env, rows, cache, "--context", "generated")
    assert verdicts == dict.fromkeys(rows, "FAIL"), verdicts
    sent = "\n".join(requests(env / "requests.jsonl"))
    for code in rows.values():  # nothing refused reached the double
        assert code.split("\n", 1)[1].split("\n")[0] not in sent, code
    verdicts, flags = _check(env, rows, cache, "--context", "benchmark")
    assert verdicts == dict.fromkeys(rows, "pass"), verdicts
    for k, (_, rule, says, _never) in FLAGGED.items():
        assert f"flag {rule} " in flags[_id(k)] and says in flags[_id(k)], (k, flags[_id(k)])


@pytest.mark.parametrize("context", ["generated", "benchmark"])
def test_the_legitimate_shapes_pass_with_no_flag_at_both_levels(env: Path, context: str) -> None:
    rows = {_id(k): code for k, code in LEGIT.items()}
    if context == "benchmark":
        rows["partial_def"] = PARTIAL
    for cache in ("--cache", "--no-cache"):
        verdicts, flags = _check(env, rows, cache, "--context", context)
        assert verdicts == dict.fromkeys(rows, "pass"), verdicts
        assert all(f == "" for f in flags.values()), flags


@pytest.mark.parametrize("context", ["generated", "benchmark"])
def test_stop_in_a_type_and_in_a_proof_never_reaches_lean(env: Path, context: str) -> None:
    for mode, code in (("statement", STOP_IN_TYPE), ("proof", STOP_IN_PROOF)):
        for cache in ("--cache", "--no-cache"):
            verdicts, _ = _check(env, {"s": code}, cache, "--mode", mode, "--context", context)
            assert verdicts == {"s": "FAIL"}, (mode, context)
    assert [r for r in requests(env / "requests.jsonl") if "stop" in r] == []
