"""`math2 runs resume` and its neighbours: failures counted as failures, a job module that does
not import named with its error, the executor a run recorded; the `--executor` help and the
refusal of Ray on SQLite say what to type."""

from __future__ import annotations

import sys

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.runs import JobModuleBroken, resumer
from math2.runs import registry as runs_registry
from math2.runs.ray_exec import RayUnavailable, check_store
from math2.store import Run, RunItem, RunSegment
from tests.runs import lifecycle_job


def test_resume_counts_failed_results_as_failures(sqlite_store, tmp_path) -> None:
    log = tmp_path / "turns.log"
    summary = lifecycle_job.run(sqlite_store, str(log), 3, 0.0, fail_results=True)
    assert (summary.done, summary.failed, summary.failed_results) == (3, 0, 3)
    with sqlite_store.session() as s:  # the items are lost: the resume runs them again
        s.query(RunItem).delete()
    url = str(sqlite_store.engine.url)
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", str(summary.run_id)])
    # every item "done" with a result that records a failure: 3 failed, not 3 done
    assert f"run {summary.run_id}: 0 done, 3 failed, 0 already finished" in r.output, r.output
    assert r.exit_code == 1 and "every item failed" in r.output


def test_a_job_module_that_does_not_import_is_named_with_its_error(
    sqlite_store, tmp_path, monkeypatch
) -> None:
    (tmp_path / "math2_broken_job.py").write_text("import math2_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(runs_registry.JOB_MODULES, "broken-job", "math2_broken_job")
    with pytest.raises(JobModuleBroken, match="math2_broken_job, which does not import") as e:
        resumer("broken-job")
    assert "No module named 'math2_no_such_dependency'" in str(e.value)
    with sqlite_store.session() as s:
        s.add(Run(job="broken-job", key="k"))
    url = str(sqlite_store.engine.url)
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", "1"])
    assert r.exit_code == 2 and "math2_broken_job" in r.output
    assert "math2_no_such_dependency" in r.output and "cannot be resumed" not in r.output
    sys.modules.pop("math2_broken_job", None)


def test_resume_on_the_recorded_executor_and_its_override(sqlite_store, tmp_path) -> None:
    """A run last driven on Ray is resumed on Ray (here: refused, the store being SQLite — the
    refusal shows the recorded executor was taken); `--executor local` overrides it."""
    log = tmp_path / "turns.log"
    summary = lifecycle_job.run(sqlite_store, str(log), 2, 0.0)
    with sqlite_store.session() as s:
        seg = s.scalars(select(RunSegment)).one()
        seg.executor, seg.address = "ray", "ray://head:10001"
    url = str(sqlite_store.engine.url)
    r = CliRunner().invoke(app, ["--db", url, "runs", "resume", str(summary.run_id)])
    assert r.exit_code == 2 and "--executor ray needs" in r.output, r.output  # Ray, or PostgreSQL
    r = CliRunner().invoke(
        app, ["--db", url, "runs", "resume", str(summary.run_id), "--executor", "local"]
    )
    assert r.exit_code == 0 and "0 done, 0 failed, 2 already finished" in r.output, r.output
    r = CliRunner().invoke(app, ["--db", url, "runs", "show", str(summary.run_id)])
    assert "1. ray at ray://head:10001" in r.output and "2. local" in r.output


def test_ray_on_sqlite_is_refused_naming_the_db_option(sqlite_store) -> None:
    with pytest.raises(RayUnavailable) as e:
        check_store(sqlite_store)
    assert "give --db postgresql+psycopg://" in str(e.value) and "--store" not in str(e.value)


@pytest.mark.parametrize(
    "command", [["formalize"], ["informalize"], ["check"], ["eval", "run"]], ids=" ".join
)
def test_every_role_help_names_the_ray_extra(command: list[str]) -> None:
    r = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "300"})
    assert r.exit_code == 0 and "pip install 'math2[ray]'" in r.output, r.output
