"""Kill -9 the real `math2 align` mid-run, start it again: no finished call is made again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from sqlalchemy import func, select

from math2.llm.testing import spawn_fake_server
from math2.llm.testing.fake_server import received, request_hash
from math2.store import LLMResponse, Store
from math2.store.models import Crosswalk
from math2.store.work import Attempt, RunItem
from tests.roles.align.fixture import build, script

N = 6  # per kind: 24 pairs


def _env(base_url, db, tmp):
    env = dict(os.environ)
    env.update(
        {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_LLM__BASE_URL": base_url,
            "MATH2_LLM__CONCURRENCY": "2",
            "MATH2_CONFIG": str(tmp / "none.toml"),
        }
    )
    return env


CMD = [sys.executable, "-m", "math2", "align", "--model", "judge", "--dataset", "theoremgraph"]


def _state(store):
    with store.session() as s:
        return sorted(
            (c.id, c.status, (c.extra or {}).get("align", {}).get("verdict"))
            for c in s.scalars(select(Crosswalk))
        )


def test_kill_and_resume_repeats_no_finished_call(tmp_path):
    ref = Store(f"sqlite:///{tmp_path / 'ref.db'}")
    ref.upgrade()
    build(ref, n=N)
    with spawn_fake_server(script(), tmp_path / "ref-srv") as srv:
        done = subprocess.run(
            CMD,
            env=_env(srv.base_url, tmp_path / "ref.db", tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
    store = Store(f"sqlite:///{tmp_path / 'k.db'}")
    store.upgrade()
    build(store, n=N)
    with spawn_fake_server(script(latency_s=0.15), tmp_path / "srv") as srv:
        env = _env(srv.base_url, tmp_path / "k.db", tmp_path)
        proc = subprocess.Popen(
            CMD,
            env=env,
            cwd=tmp_path,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 120
        while len(srv.requests()) < 10 and time.time() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        asked = srv.requests()
        before = [r["hash"] for r in asked]
        with store.session() as s:
            stored = {request_hash(r.request) for r in s.scalars(select(LLMResponse))}
            done_items = s.scalar(
                select(func.count()).select_from(RunItem).where(RunItem.status == "done")
            )
        assert 0 < len(before) < 4 * N * 2, "the kill did not land mid-run"
        # compared in the form the store keeps (the server also gets the `stream` fields): every
        # stored reply is one the server received, so the check below can fail
        assert stored and stored <= received(asked)
        again = subprocess.run(CMD, env=env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        asked_again = srv.requests()[len(before) :]
        after = [r["hash"] for r in asked_again]
    assert stored and done_items
    assert after, "nothing was asked after the kill: the test shows nothing"
    assert not stored & received(asked_again)  # no finished call asked again
    assert len(set(after) & set(before)) <= 2  # at most the calls in flight (2 slots)
    assert _state(store) == _state(ref)
    with store.session() as s:
        # one model call per item and stage: a call that finished before the kill, whose item
        # was not yet recorded, is answered from the stored reply on resume (an attempt marked
        # cached), never asked again
        fresh = select(Attempt).where(Attempt.cached.is_(False)).subquery()
        dup = s.execute(
            select(fresh.c.item, fresh.c.stage, fresh.c.round, fresh.c.sample, func.count())
            .group_by(fresh.c.item, fresh.c.stage, fresh.c.round, fresh.c.sample)
            .having(func.count() > 1)
        ).all()
        assert dup == []
        # every item and stage has its attempt, and only the calls in flight at the kill (2
        # slots) can be the cached ones: fresh attempts are 4 N less those (CI drew one)
        keys = select(Attempt.item, Attempt.stage, Attempt.round, Attempt.sample).distinct()
        assert s.scalar(select(func.count()).select_from(keys.subquery())) == 4 * N
        assert 4 * N - 2 <= s.scalar(select(func.count()).select_from(fresh)) <= 4 * N
