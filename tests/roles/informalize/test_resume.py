"""Kill -9 the real `math2 informalize` mid-run, start it again: the same texts, no finished
model call asked again, and every declaration's prompt still holds its dependency's text —
also when that dependency was written before the kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from sqlalchemy import select

from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.llm.testing.fake_server import received, request_hash
from math2.store import LLMResponse, Store
from math2.store.work import AgentText

N = 24
WRITE = "You write the natural-language statement"


def _lean(folder):
    lines = ["namespace Chain", "def D0 (n : ℕ) : Prop := n = 0"]
    lines += [f"def D{k} (n : ℕ) (h : D{k - 1} n) : Prop := True" for k in range(1, N)]
    lines.append("end Chain")
    (folder / "Mathlib").mkdir(parents=True)
    (folder / "Mathlib" / "Chain.lean").write_text("\n\n".join(lines) + "\n")


def _script() -> Script:
    return Script(
        models=["writer", "trans"],
        latency_s=0.03,
        rules=[
            Rule(system=WRITE, user=r"Declaration: (Chain\.D\d+) ", reply=r"TEXT[\1] about $n$.",
                 expand=True),
            Rule(system="translate Lean 4", reply="Back: a property of the natural number $n$."),
            Rule(system="compare two", json={"equivalent": True, "differences": []}),
        ],
    )  # fmt: skip


def _env(base_url, db, tmp):
    env = dict(os.environ)
    env.update(
        {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_LLM__BASE_URL": base_url,
            "MATH2_LLM__CONCURRENCY": "4",
            "MATH2_CONFIG": str(tmp / "none.toml"),
        }
    )
    return env


def _store(db):
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        add_model(s, "writer")
        add_model(s, "trans")
    return store


def _cmd(folder):
    return [sys.executable, "-m", "math2", "informalize", "--model", "writer",
            "--translator", "trans", "--lean-dir", str(folder)]  # fmt: skip


def _texts(store):
    with store.session() as s:
        rows = s.scalars(select(AgentText).where(AgentText.kind == "informal_statement"))
        return {t.item: (t.body, t.extra["accepted"]) for t in rows}


def _prompt_holds_dependency(requests) -> None:
    for r in requests:
        content = r["body"]["messages"][-1]["content"]
        if WRITE not in r["body"]["messages"][0]["content"]:
            continue
        k = int(content.split("Declaration: Chain.D")[1].split(" ")[0])
        if k:
            assert f"- Chain.D{k - 1}: TEXT[Chain.D{k - 1}] about $n$." in content, k


def test_kill_and_resume(tmp_path):
    folder = tmp_path / "lean"
    _lean(folder)
    ref = _store(tmp_path / "ref.db")
    with FakeServer(_script()) as srv:
        done = subprocess.run(
            _cmd(folder), env=_env(srv.base_url, tmp_path / "ref.db", tmp_path),
            cwd=tmp_path, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        total = len(srv.requests)
    store = _store(tmp_path / "k.db")
    with FakeServer(_script()) as srv:
        env = _env(srv.base_url, tmp_path / "k.db", tmp_path)
        proc = subprocess.Popen(
            _cmd(folder), env=env, cwd=tmp_path, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.time() + 120
        while len(srv.requests) < total // 2 and time.time() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = len(srv.requests)
        assert 0 < killed_at < total, "the kill did not land mid-run"
        with store.session() as s:
            stored = {request_hash(r.request) for r in s.scalars(select(LLMResponse))}
        again = subprocess.run(_cmd(folder), env=env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        hashes = srv.hashes()
        requests = list(srv.requests)
    assert _texts(store) == _texts(ref) and len(_texts(store)) == N
    after = hashes[killed_at:]
    # compared in the form the store keeps (the server also gets the `stream` fields): every
    # stored reply is one the server received, so the check that follows can fail
    assert stored and stored <= received(requests[:killed_at])
    assert after, "nothing was asked after the kill: the test shows nothing"
    assert not stored & received(requests[killed_at:])  # no finished call was asked again
    assert len(set(after) & set(hashes[:killed_at])) <= 4  # only calls in flight at the kill
    _prompt_holds_dependency(requests)
