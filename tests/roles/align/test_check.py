"""The `checked` stage of bindings on the fake REPL (a test double standing in for the pinned
build): hygiene at GENERATED trust, compile, axioms, the build's type hash and the Lean identity;
only a checked binding can be confirmed; a resumed run asks Lean nothing again."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from sqlalchemy import select

from math2.config import LeanSettings, Settings
from math2.importers.lean_scout import type_hash_of
from math2.llm import add_model
from math2.roles.align import CheckOptions, propose_binding, run_check
from math2.runs import Resume, resumer
from math2.store import AgentText, Binding, Mention, Node, Run
from math2.store.models import BindingOrigin
from math2.web.review import Decision, ReviewError, decide_binding
from tests.roles.align.fixture import _source, mention

ADD_COMM = "∀ (n m : ℕ), n + m = m + n"
LIBRARY = {
    "Nat.add_comm": {"type": ADD_COMM, "axioms": []},
    "Bad.sorried": {"type": "1 = 2", "axioms": ["sorryAx"]},
    "Moved.decl": {"type": "∀ (n : ℕ), n ≤ n + 1", "axioms": []},
    "Real.pi": {"type": "ℝ", "axioms": ["Classical.choice"]},
}
FORMAL_OK = "import Mathlib\n\ntheorem two_add (a b : ℕ) : a + b = b + a := by\n  sorry\n"
FORMAL_HACK = (
    "import Mathlib\n\ninstance : LT ℕ := ⟨fun _ _ => True⟩\n\n"
    "theorem hack : (1 : ℕ) < 0 := by\n  sorry\n"
)


def _settings(tmp_path):
    lib = tmp_path / "library.json"
    lib.write_text(json.dumps(LIBRARY), "utf-8")
    argv = [sys.executable, "-m", "math2.lean.testing.fake_repl", "--library", str(lib)]
    argv += ["--log", str(tmp_path / "repl.jsonl")]
    return Settings(lean=LeanSettings(project_dir=tmp_path, repl_command=argv, workers=2))


def _lean_requests(tmp_path) -> list[str]:
    log = tmp_path / "repl.jsonl"
    if not log.exists():
        return []
    cmds = [json.loads(line).get("cmd", "") for line in log.read_text().splitlines()]
    return [c for c in cmds if c and not c.startswith("import") and "versionString" not in c]


def _seed(store) -> dict[str, int]:
    """One binding of each kind: a good library declaration, one that trusts sorryAx, one whose
    type moved since the import, one the build lacks, a name reaching IO, a definition; a
    model's good statement and a model's statement with an instance."""
    with store.session() as s:
        model, _ = add_model(s, "gen")
        lib = _source(s, "mathlib", "lean4")
        ids: dict[str, int] = {}
        for key, name, kind, thash in (
            ("good", "Nat.add_comm", "theorem", type_hash_of(ADD_COMM)),
            ("sorried", "Bad.sorried", "theorem", None),
            ("moved", "Moved.decl", "theorem", type_hash_of("∀ (n : ℕ), n < n + 1")),
            ("gone", "Gone.decl", "theorem", None),
            ("evil", "IO.Process.exit", "def", None),
            ("definition", "Real.pi", "def", type_hash_of("ℝ")),
        ):
            m = mention(s, lib, name, f"theorem {name} : …", kind=kind, type_hash=thash)
            node = Node(key=f"n:{key}", title=key)
            s.add(node)
            s.flush()
            ids[key] = propose_binding(s, node.id, BindingOrigin.ALIGN, mention_id=m.id).id
        for key, body, theorem in (("formal", FORMAL_OK, "two_add"), ("hack", FORMAL_HACK, "hack")):
            node = Node(key=f"n:{key}", title=key)
            s.add(node)
            s.flush()
            text = AgentText(
                kind="formal_statement",
                body=body,
                node_id=node.id,
                model_id=model.id,
                template_id="formalize/generate@1",
                template_hash="0" * 64,
                extra={"theorem": theorem},
            )
            s.add(text)
            s.flush()
            b = propose_binding(s, node.id, BindingOrigin.FORMALIZE, agent_text_id=text.id)
            ids[key] = b.id
        return ids


def _bindings(store) -> dict[int, Binding]:
    with store.session() as s:
        rows = list(s.scalars(select(Binding)))
        s.expunge_all()
        return {b.id: b for b in rows}


def test_check_stage_verdicts(sqlite_store, tmp_path):
    ids = _seed(sqlite_store)
    summary = asyncio.run(run_check(_settings(tmp_path), sqlite_store, CheckOptions()))
    assert summary.done == len(ids) and summary.failed == 0
    rows = _bindings(sqlite_store)
    status = {k: rows[i].status for k, i in ids.items()}
    assert status == {
        "good": "checked",
        "sorried": "check_failed",
        "moved": "check_failed",
        "gone": "check_failed",
        "evil": "check_failed",
        "definition": "checked",
        "formal": "checked",
        "hack": "check_failed",
    }
    good = rows[ids["good"]].lean_check
    assert good["passed"] and good["type"] == ADD_COMM
    assert good["type_hash"] == good["imported_type_hash"] == type_hash_of(ADD_COMM)
    assert good["axioms"] == ["Classical.choice", "Quot.sound", "propext"]
    # the verdict names the Lean that gave it (here a double, and it says so)
    assert good["lean"]["kind"] == "fake-repl" and "test double" in good["compiled_by"]
    assert good["trust"] == "generated" and good["run"] == summary.run_id and good["attempt"]
    assert "sorryAx" in rows[ids["sorried"]].lean_check["reason"]
    assert "the pin moved" in rows[ids["moved"]].lean_check["reason"]
    assert "Gone.decl" in rows[ids["gone"]].lean_check["reason"]
    assert rows[ids["evil"]].lean_check["status"] == "rejected"
    formal = rows[ids["formal"]].lean_check
    assert formal["mode"] == "statement" and formal["type"] == "(a b : ℕ) : a + b = b + a"
    assert formal["type_hash"] == type_hash_of("(a b : ℕ) : a + b = b + a")
    hack = rows[ids["hack"]].lean_check
    assert hack["status"] == "rejected" and "instance" in hack["reason"]
    sent = "\n".join(_lean_requests(tmp_path))
    assert "IO.Process" not in sent and "LT ℕ" not in sent  # refused before Lean


def test_only_a_checked_binding_can_be_confirmed(sqlite_store, tmp_path):
    ids = _seed(sqlite_store)
    with sqlite_store.session() as s, pytest.raises(ReviewError, match="not been checked"):
        decide_binding(s, ids["good"], Decision.CONFIRM, "ann", "same statement")
    asyncio.run(run_check(_settings(tmp_path), sqlite_store, CheckOptions()))
    with sqlite_store.session() as s:
        with pytest.raises(ReviewError, match=r"its Lean check failed: .*sorryAx"):
            decide_binding(s, ids["sorried"], Decision.CONFIRM, "ann", "looks fine")
        decide_binding(s, ids["sorried"], Decision.REJECT, "ann", "trusts sorry")
        decide_binding(s, ids["good"], Decision.CONFIRM, "ann", "same statement")
        decide_binding(s, ids["formal"], Decision.CONFIRM, "ann", "faithful")
    rows = _bindings(sqlite_store)
    assert rows[ids["good"]].status == "confirmed" and rows[ids["formal"]].status == "confirmed"
    assert rows[ids["sorried"]].status == "rejected"
    # a new check run takes only what is still waiting, and never undoes a person's decision
    asyncio.run(run_check(_settings(tmp_path), sqlite_store, CheckOptions()))
    rows = _bindings(sqlite_store)
    assert rows[ids["good"]].status == "confirmed" and rows[ids["sorried"]].status == "rejected"


def test_resumed_check_asks_lean_nothing_again(sqlite_store, tmp_path):
    ids = _seed(sqlite_store)
    first = asyncio.run(run_check(_settings(tmp_path), sqlite_store, CheckOptions()))
    asked = len(_lean_requests(tmp_path))
    assert asked == 6  # the two refusals never reached Lean
    with sqlite_store.session() as s:
        run = s.get(Run, first.run_id)
    again = asyncio.run(resumer(run.job)(run, _settings(tmp_path), sqlite_store, Resume(run.id)))
    assert again.run_id == first.run_id and again.skipped == len(ids) and again.done == 0
    assert len(_lean_requests(tmp_path)) == asked
    # a fresh run checks again what failed (a new run), answered from the Lean result cache
    later = asyncio.run(run_check(_settings(tmp_path), sqlite_store, CheckOptions()))
    assert later.run_id != first.run_id and later.done == 5  # the five that failed
    assert len(_lean_requests(tmp_path)) == asked  # the same Lean: each failure cached


def test_cli_bindings_check(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from math2.cli import app
    from math2.store import Store

    db = tmp_path / "math2.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    ids = _seed(store)
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{db}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("MATH2_LEAN__PROJECT_DIR", raising=False)
    res = CliRunner().invoke(app, ["bindings", "check"])
    assert res.exit_code != 0 and "Lake project" in res.output  # no Lean: said, nothing run
    lean = _settings(tmp_path).lean
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(lean.repl_command))
    res = CliRunner().invoke(app, ["bindings", "check", "--limit", "3"])
    assert res.exit_code == 0, res.output
    assert "checked: 1" in res.output and "check_failed: 2" in res.output
    rows = _bindings(store)
    assert rows[ids["good"]].status == "checked" and rows[ids["formal"]].status == "proposed"


def test_crosswalk_edges_propose_bindings_once(sqlite_store):
    """An accepted same_as edge to a Lean declaration is a proposed binding (origin crosswalk);
    candidates, implies edges and edges into other systems are not; a second pass adds none."""
    from math2.roles.align import propose_from_crosswalks
    from math2.store import Crosswalk
    from tests.roles.align.fixture import build

    built = build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        for key, relation in (("SAME0", "same_as"), ("IMPL0", "implies")):
            cw = s.get(Crosswalk, built.pairs[key])
            cw.status, cw.relation = "accepted", relation
            cw.mention_id = s.scalar(
                select(Mention.id).where(Mention.name == cw.target, Mention.source_id == 1)
            )
        assert propose_from_crosswalks(s) == 1
        assert propose_from_crosswalks(s) == 0
        b = s.scalar(select(Binding))
        assert (b.origin, b.status) == ("crosswalk", "proposed")
        assert s.get(Mention, b.mention_id).name == "Lean.SAME.t0"
