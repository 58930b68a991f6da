"""Imports are runs of `math2.runs`: `runs list` shows them with their steps as items, a failed
or killed import shows as such, and `runs resume` finishes it without importing anything twice."""

from __future__ import annotations

import socket
from pathlib import Path

from sqlalchemy import func, select
from typer.testing import CliRunner

from math2.cli import app
from math2.importers.runs import _identity
from math2.runs.claim import Executor, open_segment
from math2.runs.lease import Holder, _machine
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention, Run, RunItem, RunSegment
from tests.build_helpers import SMALL_MM, small_manifest


def _cli(store, manifest: Path, *args: str):
    env = {"MATH2_MANIFEST": str(manifest), "MATH2_CONFIG": str(manifest.parent / "none.toml")}
    return CliRunner().invoke(app, ["--db", str(store.engine.url), *args], env=env)


def _mentions(store) -> int:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(Mention))


def test_an_import_is_a_run_with_its_steps(tmp_path: Path, store) -> None:
    manifest = small_manifest(tmp_path)
    mm = tmp_path / "set.mm"
    mm.write_text(SMALL_MM)
    r = _cli(store, manifest, "import", "setmm", str(mm))
    assert r.exit_code == 0, r.output
    with store.session() as s:
        run = s.scalars(select(Run).where(Run.job == "import")).one()
        items = {i.item: i for i in s.scalars(select(RunItem).where(RunItem.run_id == run.id))}
    assert run.status == "done" and run.key.startswith("setmm@") and run.spec_hash
    assert set(items) == {"read", "write"} and all(i.status == "done" for i in items.values())
    assert items["write"].result["mentions"] == 3 and items["read"].result["digest"]
    listed = _cli(store, manifest, "runs", "list", "--job", "import")
    assert listed.exit_code == 0 and "setmm@" in listed.output and "done 2" in listed.output
    # resumed when finished: nothing is imported again
    r = _cli(store, manifest, "runs", "resume", str(run.id))
    assert r.exit_code == 0, r.output
    assert f"run {run.id}: 0 done, 0 failed, 2 already finished" in r.output
    assert _mentions(store) == 3


def test_a_failed_import_is_recorded_and_resumes_once_fixed(tmp_path: Path, store) -> None:
    manifest = small_manifest(tmp_path)
    mm = tmp_path / "set.mm"
    mm.write_text(SMALL_MM.replace("$)\nid $p", "\nid $p"))  # an unterminated comment
    r = _cli(store, manifest, "import", "setmm", str(mm))
    assert r.exit_code != 0 and "unterminated comment" in r.output
    with store.session() as s:
        run = s.scalars(select(Run).where(Run.job == "import")).one()
    assert run.status == "failed" and "unterminated comment" in run.stats["error"]
    assert _mentions(store) == 0
    listed = _cli(store, manifest, "runs", "list")
    assert "failed" in listed.output
    mm.write_text(SMALL_MM)
    r = _cli(store, manifest, "runs", "resume", str(run.id))
    assert r.exit_code == 0, r.output
    assert f"run {run.id}: 2 done, 0 failed, 0 already finished" in r.output
    with store.session() as s:
        assert s.get(Run, run.id).status == "done"
        assert s.scalar(select(func.count()).select_from(Run)) == 1
    assert _mentions(store) == 3


def test_a_killed_import_shows_as_killed_and_resumes(tmp_path: Path, store) -> None:
    manifest = small_manifest(tmp_path)
    mm = tmp_path / "set.mm"
    mm.write_text(SMALL_MM)
    with store.session() as s:
        sync_manifest(s, load_manifest(manifest))
    # what SIGKILL leaves mid-import: the run row `running` under the lease of a process that
    # is gone, its segment open, no data
    dead = Holder(
        f"{socket.gethostname()}:999999999:x", socket.gethostname(), 999999999, _machine()
    )
    params = {"path": str(mm.resolve())}
    run_id = open_segment(
        store, _identity(store, "setmm"), params, None, Executor(), dead, 60
    ).run_id
    listed = _cli(store, manifest, "runs", "list")
    assert "killed" in listed.output
    r = _cli(store, manifest, "runs", "resume", str(run_id))
    assert r.exit_code == 0, r.output
    assert f"run {run_id}: 2 done" in r.output
    assert _mentions(store) == 3
    with store.session() as s:  # the dead driver's segment is closed as killed, the new one done
        segs = s.scalars(select(RunSegment).where(RunSegment.run_id == run_id)).all()
    assert [g.status for g in segs] == ["killed", "done"] and "died" in (segs[0].reason or "")
