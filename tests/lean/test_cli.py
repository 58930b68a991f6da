"""`math2 lean check` and `math2 lean setup` end to end, with the fakes."""

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.lean import install
from math2.lean.testing.fake_kimina import serve
from tests.lean.conftest import fake_argv


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(fake_argv()))
    return tmp_path


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_check_jsonl_passes_and_fails(env: Path) -> None:
    good = jsonl(
        env / "good.jsonl",
        [
            {
                "name": "a",
                "header": "import Mathlib\n",
                "formal_statement": "theorem a : True := by",
            },
            {"id": "b", "code": "import Mathlib\ntheorem b (x : ℕ) : x = x := sorry", "name": "b"},
        ],
    )
    res = CliRunner().invoke(app, ["lean", "check", str(good)])
    assert res.exit_code == 0, res.output
    assert "2 checked: 2 passed, 0 failed" in res.output
    bad = jsonl(
        env / "bad.jsonl",
        [
            {"name": "c", "code": "import Mathlib\naxiom x : False\ntheorem c : False := sorry"},
        ],
    )
    res = CliRunner().invoke(app, ["lean", "check", str(bad)])
    assert res.exit_code == 1
    assert "rejected" in res.output and "axiom" in res.output


def test_check_lean_file_is_checked_by_default(env: Path) -> None:
    f = env / "Demo.lean"
    f.write_text("import Mathlib\ndef x := 1 -- fake: error unknown_identifier y\n")
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 1
    assert "rejected" in res.output and "expected exactly one theorem" in res.output


def test_relaxed_mode_is_explicit_warns_and_still_refuses_code(env: Path) -> None:
    f = env / "Demo.lean"
    f.write_text("import Mathlib\ndef x := 1 -- fake: error unknown_identifier y\n")
    res = CliRunner().invoke(app, ["lean", "check", "--relaxed-unsafe", str(f)])
    assert res.exit_code == 1
    assert "unknown_identifier" in res.output and "warning" in res.stderr
    f.write_text('import Mathlib\n#eval IO.Process.run { cmd := "id" }\n')
    res = CliRunner().invoke(app, ["lean", "check", "--relaxed-unsafe", str(f)])
    assert res.exit_code == 1 and "rejected" in res.output


def test_data_cannot_relax_the_checks(env: Path) -> None:
    f = env / "items.jsonl"
    f.write_text('{"id": 1, "code": "import Mathlib\\ndef x := 1", "mode": "plain"}\n')
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 2 and f"{f}:1" in res.stderr and "not allowed in the data" in res.stderr


def test_empty_input_is_an_error(env: Path) -> None:
    for name in ("Empty.lean", "empty.jsonl"):
        f = env / name
        f.write_text("\n")
        res = CliRunner().invoke(app, ["lean", "check", str(f)])
        assert res.exit_code == 2 and "nothing to check" in res.stderr


def test_malformed_input_names_file_and_line(env: Path) -> None:
    f = env / "broken.jsonl"
    f.write_text('{"id": 1, "code": "x"}\n{"id": 2,\n')
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 2
    assert f"{f}:2" in res.stderr
    f.write_bytes(b'{"id": 1, "code": "\xff"}\n')
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 2 and "invalid UTF-8" in res.stderr


def test_check_with_kimina(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, url = serve()
    try:
        monkeypatch.setenv("MATH2_LEAN__BACKEND", "kimina")
        monkeypatch.setenv("MATH2_LEAN__KIMINA_URL", url)
        f = jsonl(
            env / "k.jsonl", [{"name": "a", "code": "import Mathlib\ntheorem a : True := sorry"}]
        )
        res = CliRunner().invoke(app, ["lean", "check", str(f)])
        assert res.exit_code == 0, res.output
    finally:
        server.shutdown()


def test_not_configured_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path / "absent"))
    f = jsonl(tmp_path / "x.jsonl", [{"name": "a", "code": "theorem a : True := sorry"}])
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 2 and "math2 lean setup" in res.stderr


def test_setup_dry_run_lists_what_is_missing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("HOME", str(tmp_path))
    res = CliRunner().invoke(app, ["lean", "setup", "--dry-run", "--project-dir", str(tmp_path)])
    assert res.exit_code == 0
    assert "missing  elan" in res.output and "missing  Lean REPL" in res.output


def test_setup_failure_names_the_step(tmp_path: Path) -> None:
    steps = [
        install.Step(name="project", done=False, detail="", command=None),
        install.Step(
            name="fetch",
            done=False,
            detail="",
            command=[sys.executable, "-c", "import sys; sys.exit('network unreachable')"],
        ),
    ]
    with pytest.raises(install.SetupFailed, match=r"(?s)step 'fetch' failed.*network unreachable"):
        install.run(
            steps, tmp_path / "p", "leanprover/lean4:v4.33.0-rc1", "abc", echo=lambda _: None
        )
    assert 'rev = "abc"' in (tmp_path / "p" / "lakefile.toml").read_text()


def test_check_names_the_lean_and_a_double_says_so(env: Path) -> None:
    # The last line names the Lean behind the verdicts as it reported itself; the fake REPL is
    # a test double and says so (issue 34 §6). Failures are counted by kind.
    f = jsonl(
        env / "mixed.jsonl",
        [
            {"name": "a", "code": "import Mathlib\ntheorem a : True := sorry"},
            {"name": "c", "code": "import Mathlib\naxiom x : False\ntheorem c : False := sorry"},
            {
                "name": "d",
                "code": "import Mathlib\ntheorem d : True := sorry "
                "-- fake: error unknown_identifier y",
            },
        ],
    )
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 1, res.output
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("3 checked: 1 passed, 2 failed (error 1, refused before Lean 1) — ")
    assert "checked by fake-repl · Lean fake-repl" in last, last
    assert last.endswith("— a test double, not Lean")
    # every item refused: nothing reached Lean, and the line says so
    bad = jsonl(env / "bad.jsonl", [{"name": "c", "code": "import Mathlib\naxiom x : False"}])
    res = CliRunner().invoke(app, ["lean", "check", str(bad)])
    assert res.exit_code == 1
    last = res.stdout.strip().splitlines()[-1]
    assert last.endswith("— nothing reached Lean (hygiene refused every item)"), last
    assert "fake-repl" not in last


@pytest.mark.parametrize("field", ["formal_statement", "lean4_formalization", "ground_truth"])
def test_check_reads_each_benchmark_field_and_names_it(env: Path, field: str) -> None:
    # MathForm's harness rows hold the statement in `ground_truth` (issue 34 §3).
    f = jsonl(
        env / "bench.jsonl",
        [
            {
                "name": f"p{i}",
                "problem": "Truth holds.",
                "header": "import Mathlib",
                field: f"theorem p{i} : True := by sorry",
                "benchmark_name": "Toy",
            }
            for i in range(2)
        ],
    )
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 0, res.output
    assert f"2 items from {f}: field '{field}' 2" in " ".join(res.stderr.split())
    assert "2 checked: 2 passed, 0 failed" in res.stdout


def test_a_line_without_lean_says_which_fields_are_read(env: Path) -> None:
    f = jsonl(env / "none.jsonl", [{"name": "p", "problem": "Truth holds.", "statement": "x"}])
    res = CliRunner().invoke(app, ["lean", "check", str(f)])
    assert res.exit_code == 2
    err = " ".join(res.stderr.split())
    assert f"{f}:1" in err and "no Lean to check" in err
    for name in ("'code'", "'formal_statement'", "'lean4_formalization'", "'ground_truth'"):
        assert name in err
    assert "it has 'name', 'problem', 'statement'" in err
