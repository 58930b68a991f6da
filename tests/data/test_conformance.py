"""The conformance group (marker `data`) over the real external data: every set whole and at its
pin; checks-dev's pairs as the check battery reads them. And how the group behaves where the data
is not: not run, with the reason in the summary — or failed where MATH2_REQUIRE_DATA=1 — and a
file that differs from its pin refused by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from math2.checks.pairs import read_pairs
from math2.config import load_settings
from math2.data import load_external, status
from math2.lean.lexer import tokenize
from tests.conftest import REPO
from tests.data.helpers import sha
from tests.data_conformance import REAL_DATA, real_data

SETS = ("lean-repl-transcripts", "1000-plus", "mathlib-docs", "fate-m", "checks-dev")


@pytest.mark.data(*SETS)
def test_every_real_set_is_whole_at_its_pin() -> None:
    rows = status(load_settings(data={"dir": REAL_DATA}))
    assert [r.name for r in rows] == list(SETS)
    assert all(r.ok for r in rows), [r.problem for r in rows if not r.ok]


@pytest.mark.data("checks-dev")
def test_checks_dev_pairs_are_whole_labelled_and_consistent() -> None:
    path = real_data("checks-dev") / "pairs.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    pairs = list(read_pairs(path))
    (file,) = load_external().get("checks-dev").files
    # the earlier miner's making (CI's copy of the data) is read, and checked for what it is
    if (how := file.made(sha(path.read_bytes()))) is not None:
        assert how.startswith("mined before issue 36 §4")
        assert len(pairs) == len(rows) == 784 and len({r["id"] for r in rows}) == 784
        assert Counter(r["faithful"] for r in rows) == {True: 470, False: 314}
        for r in rows:
            tokenize(r["formal"])
        both = defaultdict(set)
        for r in rows:
            both[(r["informal"], " ".join(r["formal"].split()))].add(r["faithful"])
        # what issue 36 §4 fixed: 3 whitespace-only changes labelled both ways
        assert sum(len(v) > 1 for v in both.values()) == 3
        return
    assert len(pairs) == len(rows) == 799
    assert Counter(r["faithful"] for r in rows) == {True: 477, False: 322}
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        # a whole statement: it ends at the proof's `:=`, which is the last one at depth 0
        assert r["formal"].endswith(":= by\n  sorry"), r["id"]
        tokenize(r["formal"])
        if " let " in f" {r['formal']} ":
            assert r["formal"].count(":=") >= 2, r["id"]
    # no before/after pair that only reformats, no statement labelled both ways
    by_change = defaultdict(dict)
    for r in rows:
        key, _, side = r["id"].rpartition("/")
        by_change[key][side] = r["formal"].split()
    assert not [k for k, v in by_change.items() if v.get("before") == v.get("after") is not None]
    labels = defaultdict(set)
    for r in rows:
        labels[(r["informal"], " ".join(r["formal"].split()))].add(r["faithful"])
    assert all(len(v) == 1 for v in labels.values())


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "MATH2_DATA", "MATH2_REQ"))
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


WHOLE = "tests/data/test_conformance.py::test_every_real_set_is_whole_at_its_pin"
FATE = "tests/eval/test_benchmarks.py::test_real_fate_m_loads_whole"


def test_without_the_data_the_group_is_not_run_and_says_why() -> None:
    res = _pytest(WHOLE, FATE)
    assert res.returncode == 0 and "2 skipped" in res.stdout, res.stdout[-3000:]
    assert "2 tests NOT RUN" in res.stdout and "MATH2_DATA__DIR is not set" in res.stdout


def test_required_and_absent_the_group_fails() -> None:
    res = _pytest(WHOLE, FATE, MATH2_REQUIRE_DATA="1")
    # failed (1), not skipped nor "no tests ran" (5)
    assert res.returncode == 1 and "2 failed" in res.stdout, res.stdout[-3000:]
    assert "MATH2_REQUIRE_DATA=1 but data set" in res.stdout


def test_a_file_altered_is_refused_by_name(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "benchmarks").mkdir(parents=True)
    (data / "benchmarks" / "fate_m.json").write_text("[]\n")
    res = _pytest(FATE, MATH2_DATA__DIR=str(data))
    flat = " ".join(res.stdout.split())
    assert res.returncode == 1 and "1 failed" in res.stdout, res.stdout[-3000:]
    pinned = load_external().get("fate-m").files[0].sha256
    assert str(data / "benchmarks" / "fate_m.json") in flat
    assert sha("[]\n") in flat and pinned in flat


@pytest.mark.data(*SETS)
def test_a_copy_of_the_real_data_runs_and_one_altered_file_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(Path(REAL_DATA or ""), copy)
    res = _pytest(WHOLE, FATE, MATH2_DATA__DIR=str(copy), MATH2_REQUIRE_DATA="1")
    assert res.returncode == 0 and "2 passed" in res.stdout, res.stdout[-3000:]
    page = copy / "crosswalk" / "1000-plus" / "_thm" / "Q11518.md"
    page.write_text(page.read_text() + "\n")
    res = _pytest(WHOLE, MATH2_DATA__DIR=str(copy), MATH2_REQUIRE_DATA="1")
    assert res.returncode == 1 and str(page) in " ".join(res.stdout.split()), res.stdout[-3000:]
