"""`math2 informalize --limit 8` end to end against a real (tiny) model: llama-server with
SmolLM2-135M. The model's texts are mostly poor; the test asserts that the role copes: every
item finishes, every text is pending agent text with its provenance, every battery verdict is
stored, and nothing is accepted whose checks did not all pass."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.store import Store
from math2.store.work import AgentText, Attempt, CheckResultRow, RunItem

pytestmark = pytest.mark.llm
HERE = Path(__file__).parent


def test_informalize_limit_8_with_smollm2(tmp_path, monkeypatch, llama_server):
    tree = tmp_path / "lean"
    shutil.copytree(HERE / "fixture", tree)
    shutil.copytree(HERE / "fixture_more", tree, dirs_exist_ok=True)
    shutil.copytree(HERE.parent.parent / "fixtures" / "leanproj", tree, dirs_exist_ok=True)
    db = tmp_path / "m.db"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{db}")
    monkeypatch.setenv("MATH2_LLM__BASE_URL", llama_server.base_url)
    monkeypatch.setenv("MATH2_LLM__CONCURRENCY", "2")
    monkeypatch.setenv("MATH2_LLM__TIMEOUT_S", "180")
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0  # only init and build create a store
    res = runner.invoke(
        app,
        ["models", "add", llama_server.model, "--provider", "llama.cpp", "--terms", "Apache-2.0"],
    )
    assert res.exit_code == 0, res.output
    args = [
        "informalize",
        "--model", llama_server.model,
        "--translator", llama_server.model,
        "--lean-dir", str(tree),
        "--limit", "8",  # bounded by items and token budgets: about 4 min on 2 cores
        "--max-tokens", "48",
        "--check-max-tokens", "64",
    ]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "8 written this time" in res.output
    store = Store(f"sqlite:///{db}")
    with store.session() as s:
        items = list(s.scalars(select(RunItem)))
        texts = list(s.scalars(select(AgentText).where(AgentText.kind == "informal_statement")))
        checks = list(s.scalars(select(CheckResultRow)))
        stages = {a.stage for a in s.scalars(select(Attempt))}
    store.close()
    assert len(items) == 8 and all(i.status == "done" for i in items)
    assert "write" in stages and any(st.endswith(":nli") for st in stages)
    assert len(texts) == sum(1 for i in items if i.result.get("informal"))
    by_text: dict[int, list[CheckResultRow]] = {}
    for c in checks:
        by_text.setdefault(c.agent_text_id, []).append(c)
    for t in texts:
        assert t.status == "pending" and t.template_id == "informalize/statement@1"
        verdicts = {c.check: c.verdict for c in by_text[t.id]}
        assert "backtranslation" in verdicts
        # accepted only when every check that applies passed (a lint that does not apply to a
        # Prop-valued definition says skip); an unreadable NLI reply is an error, not a pass;
        # a lint under the precision bar on the dev set only warns (its `fail` carries `warn`)
        applied = [c for c in by_text[t.id] if c.verdict != "skip"]
        warns = [c for c in applied if c.verdict == "fail" and (c.evidence or {}).get("warn")]
        blocking = [c for c in applied if c not in warns]
        assert t.extra["accepted"] == (bool(applied) and all(c.verdict == "pass" for c in blocking))
    # a second run with the same options resumes: nothing new is written
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "0 written this time" in again.output
    assert "8 already finished" in again.output
