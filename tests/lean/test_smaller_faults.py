"""Issue 41 §5 (written for math2): a `partial def` in a person's context is accepted; a
person's item of several theorems each proved by `sorry` and no part names is accepted with a
flag; a field over the text limit refuses its item, not the file."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from math2.cli import app
from math2.lean.hygiene import ContextTrust, check_code
from math2.util.textlimit import set_text_limit, text_limit
from tests.lean.conftest import requests
from tests.lean.library_fixture import LIBRARY

BENCH = ContextTrust.BENCHMARK
H = "import Mathlib\n"
PARTIAL = H + "partial def loop (n : ℕ) : ℕ := loop (n + 1)\ntheorem foo : True := by sorry"
UNLABELLED = H + "".join(f"theorem part{i} : {i} = {i} := by sorry\n" for i in range(4))


def test_a_partial_def_in_a_persons_context_is_accepted_with_no_flag() -> None:
    report = check_code(PARTIAL, name="foo", trust=BENCH, known_name=LIBRARY)
    assert report.ok and report.flags == [], (report.reason, report.flags)
    assert not check_code(PARTIAL, name="foo", known_name=LIBRARY).ok  # a model's: no def


def test_unlabelled_parts_are_accepted_with_a_flag() -> None:
    report = check_code(UNLABELLED, trust=BENCH, known_name=LIBRARY)
    assert report.ok, report.reason
    assert report.targets == [f"part{i}" for i in range(4)]
    assert [f.rule for f in report.flags] == ["unlabelled parts"], report.flags
    # a helper lemma with a real proof: the last theorem alone is the target, the item as before
    proved = H + "theorem h : 1 = 1 := rfl\ntheorem foo : 2 = 2 := by sorry"
    one = check_code(proved, trust=BENCH, known_name=LIBRARY)
    assert one.ok and one.targets == ["foo"] and one.flags == [], one.flags
    assert not check_code(UNLABELLED, known_name=LIBRARY).ok  # a model's block: one theorem


def test_an_oversized_field_refuses_its_item_not_the_file(env: Path, monkeypatch) -> None:
    monkeypatch.setenv("MATH2_INPUT__MAX_TEXT_CHARS", "200")
    rows = [
        {"id": "small", "theorem_name": "foo", "code": H + "theorem foo : True := by sorry"},
        {"id": "big", "theorem_name": "foo", "code": H + "theorem foo : True := by sorry",
         "note": "x" * 500},
        {"id": "unlabelled", "code": UNLABELLED},
        {"id": "partial", "theorem_name": "foo", "code": PARTIAL},
    ]  # fmt: skip
    f = env / "items.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = text_limit()
    try:
        args = ["lean", "check", "--no-cache", "--context", "benchmark", str(f)]
        res = CliRunner().invoke(app, args)
    finally:
        set_text_limit(before)  # the CLI sets the process's one limit: not for later tests
    assert res.exit_code == 1, res.output  # one item failed, the file was read
    lines = {ln.split()[1]: ln for ln in res.output.splitlines() if ln[:4] in ("pass", "FAIL")}
    assert lines["big"].startswith("FAIL") and "items.jsonl:2" in lines["big"], res.output
    for ok in ("small", "unlabelled", "partial"):
        assert lines[ok].startswith("pass"), (ok, res.output)
    assert "4 checked: 3 passed, 1 failed" in res.output
    assert "flag unlabelled parts" in res.output
    assert all("x" * 500 not in r for r in requests(env / "requests.jsonl"))
