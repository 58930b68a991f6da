"""`math2 formalize` and its search index (issue 46 §3): without the index it would search it
refuses, in one line, with the command that builds it (or `--no-retrieval`), before any model
is called; the index searched is part of the run's identity, so another or a rebuilt index is a
new run and the old run's recorded parameters stay as they were."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app
from math2.llm import add_model
from math2.llm.testing import FakeServer
from math2.roles.formalize import FormalizeOptions, NoSearchIndex, run_formalize
from math2.store import Run, Store
from tests.roles.formalize.scripts import ITEMS, formalize_script, write_items
from tests.settings import REPL_RULES, settings_for

# an item whose planner does not search: the index is named, never opened
QUIET = [it for it in ITEMS if it["id"] == "alpha"]


def _env(tmp: Path, base_url: str, index_dir: Path) -> dict[str, str]:
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    for r in REPL_RULES:
        repl += ["--rule", r]
    return {
        "MATH2_LLM__BASE_URL": base_url,
        "MATH2_LEAN__PROJECT_DIR": str(tmp),
        "MATH2_LEAN__REPL_COMMAND": json.dumps(repl),
        "MATH2_LEAN__WORKERS": "1",
        "MATH2_RETRIEVAL__INDEX_DIR": str(index_dir),
        "MATH2_CONFIG": str(tmp / "none.toml"),
    }


def _runs(store: Store) -> list[Run]:
    with store.session() as s:
        return list(s.scalars(select(Run).order_by(Run.id)).all())


def test_formalize_without_its_index_refuses_then_the_index_is_its_identity(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    with store.session() as s:
        add_model(s, "gen")
        add_model(s, "judge")
    inp = tmp_path / "in.jsonl"
    write_items(inp, QUIET)
    index_dir = tmp_path / "index"
    cmd = ["--db", f"sqlite:///{db}", "formalize", str(inp), "--model", "gen", "--judge", "judge"]
    runner = CliRunner()
    with FakeServer(formalize_script()) as srv:
        env = _env(tmp_path, srv.base_url, index_dir)
        refused = runner.invoke(app, cmd, env=env)
        assert refused.exit_code == 2, refused.output
        line = " ".join(refused.stderr.split())
        assert line.startswith("error: formalize searches the mathlib index"), line
        assert "math2 index build --library mathlib" in line and "--no-retrieval" in line, line
        assert "Traceback" not in refused.output
        assert (
            _runs(store) == [] and sum(srv.counts().values()) == 0
        )  # nothing ran, no model called

        # asked for: without search it runs
        plain = runner.invoke(app, [*cmd, "--no-retrieval"], env=env)
        assert plain.exit_code == 0, plain.output

        # an index (only its meta.json is read: these items' planner does not search)
        meta = index_dir / "mathlib" / "meta.json"
        meta.parent.mkdir(parents=True)
        meta.write_text(json.dumps({"count": 1, "built_at": 1.0}))
        first = runner.invoke(app, cmd, env=env)
        assert first.exit_code == 0, first.output
        assert "1 formalized this time (1 passed" in first.output, first.output
        again = runner.invoke(app, cmd, env=env)
        assert "0 formalized this time" in again.output, again.output  # the same run
        meta.write_text(json.dumps({"count": 1, "built_at": 2.0}))  # rebuilt: another index
        rebuilt = runner.invoke(app, cmd, env=env)
        assert rebuilt.exit_code == 0, rebuilt.output
        assert f"{len(QUIET)} formalized this time" in rebuilt.output, rebuilt.output
    runs = _runs(store)
    assert len(runs) == 3, [(r.id, r.key) for r in runs]
    no_search, with_a, with_b = runs
    assert ":index=" not in no_search.key and no_search.params["index"] is None
    assert with_a.key.split(":index=")[1].startswith("mathlib@")
    assert with_a.key != with_b.key
    assert with_a.params["index"] != with_b.params["index"]  # the first run's record kept
    assert with_a.key.endswith(with_a.params["index"])


def test_the_library_refuses_too_unless_asked(tmp_path: Path, sqlite_store: Store) -> None:
    """`run_formalize` itself refuses a run that would search an index it does not have (the
    CLI only calls it): nothing recorded, no model called; `require_index=False` runs it, each
    search attempt saying there is no index."""
    with sqlite_store.session() as s:
        add_model(s, "gen", provider="fake")
        add_model(s, "judge", provider="fake")
    inp = tmp_path / "in.jsonl"
    write_items(inp, QUIET)
    opts = FormalizeOptions(model="gen", judge="judge")
    with FakeServer(formalize_script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        st.retrieval.index_dir = tmp_path / "no-index"
        with pytest.raises(NoSearchIndex, match="math2 index build --library mathlib"):
            asyncio.run(run_formalize(st, sqlite_store, inp, opts))
        assert _runs(sqlite_store) == [] and sum(srv.counts().values()) == 0
        summary = asyncio.run(run_formalize(st, sqlite_store, inp, opts, require_index=False))
    assert summary.done == len(QUIET) and summary.failed == 0
    (run,) = _runs(sqlite_store)
    assert run.params["index"] is None and ":index=" not in run.key
