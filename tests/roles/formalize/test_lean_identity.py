"""A run's identity names its Lean: `math2 formalize` under another Lean (the fake REPL scripted
to report another version) is a new run whose verdicts are fresh — not "0 formalized this time"
— and resuming the first run under it is refused, naming what changed, unless the user allows
it; `runs show` and `runs resume` name the Lean of the verdicts (a test double, said so). Every
accepted statement records where it came from (`source`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm import add_model
from math2.llm.testing import FakeServer
from math2.store import AgentText, Attempt, Run, RunSegment, Store
from tests.roles.formalize.scripts import ITEMS, formalize_script, write_items
from tests.settings import REPL_RULES


def _env(tmp: Path, base_url: str, repl_log: Path, wording: str) -> dict[str, str]:
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--log", str(repl_log)]
    repl += ["--wording", wording]
    for r in REPL_RULES:
        repl += ["--rule", r]
    return {
        "MATH2_LLM__BASE_URL": base_url,
        "MATH2_LLM__CONCURRENCY": "4",
        "MATH2_LEAN__PROJECT_DIR": str(tmp),
        "MATH2_LEAN__REPL_COMMAND": json.dumps(repl),
        "MATH2_LEAN__WORKERS": "2",
        "MATH2_CONFIG": str(tmp / "none.toml"),
    }


def _checks(log: Path) -> int:
    """Checks the fake REPL ran (header loads and version questions left out)."""
    if not log.exists():
        return 0
    cmds = [json.loads(x).get("cmd", "") for x in log.read_text().splitlines()]
    return sum(1 for c in cmds if "theorem" in c)


def test_another_lean_is_another_run_with_fresh_verdicts(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        add_model(s, "gen")
        add_model(s, "judge")
    inp = tmp_path / "in.jsonl"
    write_items(inp, ITEMS)
    cmd = ["--db", f"sqlite:///{db}", "formalize", str(inp), "--model", "gen", "--judge", "judge"]
    cmd.append("--no-retrieval")  # no index here: formalize would refuse (issue 46 §3)
    new_log, old_log = tmp_path / "repl-new.log", tmp_path / "repl-old.log"
    runner = CliRunner()
    with FakeServer(formalize_script()) as srv:
        first = runner.invoke(app, cmd, env=_env(tmp_path, srv.base_url, new_log, "new"))
        assert first.exit_code == 0, first.output
        assert f"{len(ITEMS)} formalized this time" in first.output
        # the same command under another Lean: a new run, every item checked by that Lean
        other = _env(tmp_path, srv.base_url, old_log, "old")
        second = runner.invoke(app, cmd, env=other)
        assert second.exit_code == 0, second.output
        assert f"{len(ITEMS)} formalized this time" in second.output
        assert "0 already finished" in second.output and _checks(old_log) >= len(ITEMS) - 1
        with store.session() as s:
            runs = s.scalars(select(Run).order_by(Run.id)).all()
            assert len(runs) == 2 and runs[0].spec_hash != runs[1].spec_hash
            leans = [r.spec["lean"]["lean_version"] for r in runs]
            by = {
                rid: {a.response.get("compiled_by") for a in s.scalars(
                    select(Attempt).where(Attempt.run_id == rid, Attempt.stage == "compile")
                )}
                for rid in (runs[0].id, runs[1].id)
            }  # fmt: skip
        assert leans[0] != leans[1] and all(v.startswith("fake-repl ") for v in leans)
        # no verdict of one answers the other (a refused block has no Lean: '')
        assert (by[runs[0].id] - {""}).isdisjoint(by[runs[1].id] - {""})
        # resuming the first run under the other Lean: refused, naming what changed
        r = runner.invoke(app, ["--db", f"sqlite:///{db}", "runs", "resume", "1"], env=other)
        assert r.exit_code == 2, r.output
        assert "lean.lean_version" in r.output and leans[0] in r.output and leans[1] in r.output
        assert "--allow-changed" in r.output
        r = runner.invoke(
            app, ["--db", f"sqlite:///{db}", "runs", "resume", "1", "--allow-changed"], env=other
        )
        assert r.exit_code == 0, r.output
        assert "already finished" in r.output
        assert f"verdicts by Lean: fake-repl · Lean {leans[1]}" in r.output
        assert "a test double, not Lean" in r.output
    with store.session() as s:
        segs = s.scalars(select(RunSegment).where(RunSegment.run_id == 1)).all()
        assert [g.status for g in segs] == ["done", "done"] and not segs[0].changes
        assert any(c.startswith("lean.lean_version:") for c in segs[1].changes)
        texts = s.scalars(select(AgentText).where(AgentText.run_id == 1)).all()
    r = runner.invoke(app, ["--db", f"sqlite:///{db}", "runs", "show", "1"])
    assert f"Lean: fake-repl · Lean {leans[0]} · no Mathlib (test double)" in r.output
    assert "— a test double, not Lean" in r.output
    assert "changed: lean.lean_version" in r.output
    # each accepted statement says where its informal statement came from: the input's line
    lines = {item["id"]: n for n, item in enumerate(ITEMS, 1)}
    assert texts, "no statement passed"
    for t in texts:
        assert t.extra["source"] == f"{inp}:{lines[t.item]}"
