"""Kill -9 the real `math2 formalize` mid-run, start it again: the same results, and no model
call or Lean check that had finished is made again."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time

from sqlalchemy import select

from math2.llm import add_model
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import as_stored, received, request_hash
from math2.store import LeanResult, LLMResponse, RunItem, Store
from tests.roles.formalize.scripts import formalize_script, write_items
from tests.settings import REPL_RULES

KINDS = ["ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA"]
N = 30


def _items():
    return [
        {"id": f"{k.lower()}{i}", "statement": f"{k}: variant {i} of the {k.lower()} statement."}
        for i in range(N // len(KINDS))
        for k in KINDS
    ]


def _env(tmp, base_url, db, repl_log):
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--log", str(repl_log)]
    for r in REPL_RULES:
        repl += ["--rule", r]
    env = dict(os.environ)
    env.update(
        {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_LLM__BASE_URL": base_url,
            "MATH2_LLM__CONCURRENCY": "4",
            "MATH2_LEAN__PROJECT_DIR": str(tmp),
            "MATH2_LEAN__REPL_COMMAND": json.dumps(repl),
            "MATH2_LEAN__WORKERS": "2",
            "MATH2_CONFIG": str(tmp / "none.toml"),
        }
    )
    return env


def _register(db):
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        add_model(s, "gen")
        add_model(s, "judge")
    return store


def _cmd(inp):
    return [
        sys.executable,
        "-m",
        "math2",
        "formalize",
        str(inp),
        "--model",
        "gen",
        "--judge",
        "judge",
        "--no-retrieval",  # no index here: formalize would refuse (issue 46 §3)
    ]


def _outcomes(store):
    with store.session() as s:
        return {
            r.item: (
                r.status,
                r.result.get("outcome"),
                r.result.get("passed_round"),
                r.result.get("lean"),
                [x["compile_status"] for x in r.result.get("rounds", [])],
            )
            for r in s.scalars(select(RunItem))
        }


def test_kill_and_resume(tmp_path):
    inp = tmp_path / "in.jsonl"
    write_items(inp, _items())
    # the reference: one uninterrupted run
    ref_db = tmp_path / "ref.db"
    ref = _register(ref_db)
    with FakeServer(formalize_script(latency_s=0.02)) as srv:
        env = _env(tmp_path, srv.base_url, ref_db, tmp_path / "ref-repl.log")
        done = subprocess.run(_cmd(inp), env=env, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        ref_requests = len(srv.requests)
        # a body asked in several rounds (the same judge question) is one request per round
        ref_counts = collections.Counter(srv.hashes())
        per_round = {h for h, n in ref_counts.items() if n > 1}
        # the same, in the form the store keeps a request (without the `stream` fields)
        stored_counts = collections.Counter(as_stored(r["body"]) for r in srv.requests)
        per_round_stored = {h for h, n in stored_counts.items() if n > 1}
    # the same run, killed with SIGKILL partway, then started again
    db = tmp_path / "killed.db"
    store = _register(db)
    repl_log = tmp_path / "repl.log"
    with FakeServer(formalize_script(latency_s=0.02)) as srv:
        env = _env(tmp_path, srv.base_url, db, repl_log)
        proc = subprocess.Popen(
            _cmd(inp),
            env=env,
            cwd=tmp_path,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 60
        while len(srv.requests) < ref_requests // 2 and time.time() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = len(srv.requests)
        assert 0 < killed_at < ref_requests, "the kill did not land mid-run"
        with store.session() as s:
            stored_calls = {request_hash(r.request) for r in s.scalars(select(LLMResponse))}
            stored_checks = s.scalar(select(LeanResult.key).limit(1)) is not None
        checks_before = [json.loads(x) for x in repl_log.read_text().splitlines()]
        again = subprocess.run(_cmd(inp), env=env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        srv_hashes = srv.hashes()
        after = srv_hashes[killed_at:]
        asked, asked_again = srv.requests[:killed_at], srv.requests[killed_at:]
    # same corpus of results as the uninterrupted run
    assert _outcomes(store) == _outcomes(ref)
    # no finished (stored) model call was asked again; only calls in flight at the kill were
    # (a call holds its slot until its reply is stored): at most the generator's and the
    # judge's 4 slots each
    before = srv_hashes[:killed_at]
    # compared in the form the store keeps (the server also gets the `stream` fields): every
    # stored reply is one the server received, so the check that follows can fail
    assert stored_calls and stored_calls <= received(asked)
    assert after, "nothing was asked after the kill: the test shows nothing"
    assert not (stored_calls & received(asked_again)) - per_round_stored
    repeated_calls = (set(after) & set(before)) - per_round
    assert len(repeated_calls) <= 8
    # no body asked more often than the uninterrupted run asked it, but for the calls in flight
    # at the kill (at most 8) and a transport retry of the client under load, each counted
    bodies = {h: r["body"] for h, r in zip(srv_hashes, asked + asked_again, strict=True)}
    excess = {
        h: (n, ref_counts[h])
        for h, n in collections.Counter(before + after).items()
        if n > ref_counts[h]
    }
    assert sum(n - ref for n, ref in excess.values()) <= 8, [
        (n, ref, str(bodies[h])[-300:]) for h, (n, ref) in excess.items()
    ]
    # no finished Lean check was run again (header loads are not checks)
    checks_after = [json.loads(x) for x in repl_log.read_text().splitlines()][len(checks_before) :]
    cmds = lambda rs: [r["cmd"] for r in rs if not r["cmd"].startswith("import")]  # noqa: E731
    repeated = set(cmds(checks_before)) & set(cmds(checks_after))
    assert stored_checks
    assert len(repeated) <= 2  # at most the checks in flight on the 2 workers at the kill
