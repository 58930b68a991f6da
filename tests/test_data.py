"""The vendored data (data/): every listed file present and unchanged, and a missing one fails
the suite rather than shrinking it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA, REPO

SUMS = DATA / "SHA256SUMS"


def _listed() -> dict[str, str]:
    assert SUMS.is_file(), f"{SUMS} is missing"
    out = {}
    for line in SUMS.read_text("utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        out[name.removeprefix("./")] = digest
    return out


def test_every_listed_data_file_is_present_and_unchanged() -> None:
    listed = _listed()
    assert len(listed) > 1300  # transcripts, the 1000+ list, Mathlib's lists, FATE-M
    for name, digest in listed.items():
        path = DATA / name
        assert path.is_file(), f"vendored data missing: {path}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"changed: {path}"


def test_every_data_file_is_listed_and_each_set_names_its_source() -> None:
    listed = set(_listed())
    present = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file() and p != SUMS}
    assert present == listed
    for folder in ("lean-repl-transcripts", "crosswalk/1000-plus", "crosswalk/mathlib-docs"):
        text = (DATA / folder / "SOURCE.md").read_text("utf-8")
        assert "commit" in text and "Licen" in text, folder
    assert "MIT" in (DATA / "benchmarks" / "SOURCE.md").read_text("utf-8")
    checks_dev = (DATA / "checks-dev" / "SOURCE").read_text("utf-8")
    assert "commit" in checks_dev and "Licence" in checks_dev


def test_no_evaluation_only_benchmark_is_vendored() -> None:
    names = {p.name for p in DATA.rglob("*")}
    assert not names & {"minif2f.jsonl", "proofnet.jsonl"}


def _copy_tree(dst: Path) -> None:
    shutil.copytree(REPO / "data", dst / "data")
    shutil.copytree(
        REPO / "tests", dst / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    shutil.copy(REPO / "pyproject.toml", dst / "pyproject.toml")


def _pytest(root: Path, *tests: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO / "src")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


TESTS = (
    "tests/test_data.py::test_every_listed_data_file_is_present_and_unchanged",
    "tests/lean/test_transcripts.py::test_transcripts_present",
    "tests/lean/test_transcripts.py::test_every_request_parses",
    "tests/eval/test_benchmarks.py::test_shared_benchmarks_load_with_hashes_and_defects",
)
REMOVALS = (
    "lean-repl-transcripts/calc.in",
    "lean-repl-transcripts",
    "benchmarks/fate_m.json",
    "crosswalk/mathlib-docs/100.yaml",
)


def test_removing_a_data_file_fails_the_suite(tmp_path: Path) -> None:
    _copy_tree(tmp_path / "whole")
    whole = _pytest(tmp_path / "whole", *TESTS)
    assert whole.returncode == 0, whole.stdout[-3000:]
    for i, remove in enumerate(REMOVALS):
        root = tmp_path / f"r{i}"
        _copy_tree(root)
        target = root / "data" / remove
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        res = _pytest(root, *TESTS)
        # failed (1), not "no tests ran" (5) nor passed with fewer tests
        assert res.returncode == 1 and "failed" in res.stdout, (remove, res.stdout[-3000:])
