"""The informalize loop on a small Lean fixture, in dependency order, with the fake server."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.config import LLMSettings, Settings
from math2.llm import UnregisteredModel, add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.informalize import (
    InformalizeOptions,
    decls_from_tactics,
    dependency_order,
    goal_statement,
    run_informalize,
)
from math2.roles.informalize.records import Decl
from math2.store.work import AgentText, CheckResultRow

FIXTURE = Path(__file__).parent / "fixture"
WRITE = "You write the natural-language statement"
BACK = "translate Lean 4 theorem statements"
NLI = "compare two mathematical statements"
AUG = "You rewrite a mathematical statement"


def desc(name: str) -> str:
    return f"DESC[{name}]: a statement about the natural number $n$."


def script() -> Script:
    names = ["Chain.Tiny", "Chain.Tinier", "Chain.zero_tinier", "Chain.tinier_tiny",
             "Chain.Odd3", "Chain.odd3_tiny"]  # fmt: skip
    rules = [Rule(system=WRITE, user=f"Declaration: {re.escape(n)} ", reply=desc(n)) for n in names]
    rules += [
        Rule(system=BACK, user="def Odd3", reply="BACK-BAD: an even number."),
        Rule(system=BACK, reply="BACK-OK: a statement about the natural number $n$."),
        Rule(system=NLI, user="BACK-BAD", json={"equivalent": False, "differences": ["odd"]}),
        Rule(system=NLI, json={"equivalent": True, "differences": []}),
        Rule(system=AUG, user="Translate it into French", reply="AUG-FR: énoncé sur $n$."),
        Rule(system=AUG, reply="AUG: the same, in other words, about $n$."),
    ]
    return Script(models=["writer", "trans"], rules=rules)


@pytest.fixture
def store(sqlite_store):
    with sqlite_store.session() as s:
        add_model(s, "writer", provider="fake")
        add_model(s, "trans", provider="fake")
    return sqlite_store


def _writes(requests) -> list[dict]:
    return [r for r in requests if WRITE in r["body"]["messages"][0]["content"]]


def _name(req) -> str:
    return re.search(r"Declaration: (\S+)", req["body"]["messages"][-1]["content"]).group(1)


def test_dependency_order_prompts_checks_and_agent_text(tmp_path, store):
    opts = InformalizeOptions(
        model="writer", translator="trans", lean_dir=str(FIXTURE), augment=["equivalence",
        "translation"],
    )  # fmt: skip
    with FakeServer(script()) as srv:
        st = Settings(llm=LLMSettings(base_url=srv.base_url, concurrency=4))
        summary = asyncio.run(run_informalize(st, store, opts))
        n_first = len(srv.requests)
        again = asyncio.run(run_informalize(st, store, opts))  # resumed: nothing is asked again
        assert len(srv.requests) == n_first
        requests = list(srv.requests)
    assert summary.done == 6 and summary.failed == 0 and again.skipped == 6
    writes = _writes(requests)
    order = [_name(r) for r in writes]
    assert sorted(order) == sorted(set(order)) and len(order) == 6
    # every declaration was asked after the declarations it uses
    assert order.index("Chain.Tinier") < order.index("Chain.zero_tinier")
    assert order.index("Chain.Tinier") < order.index("Chain.tinier_tiny")
    assert order.index("Chain.Tiny") < order.index("Chain.tinier_tiny")
    prompt = {_name(r): r["body"]["messages"][-1]["content"] for r in writes}
    # the prompt holds its dependencies' descriptions, from the fake server's request log
    assert f"- Chain.Tinier: {desc('Chain.Tinier')}" in prompt["Chain.tinier_tiny"]
    assert f"- Chain.Tiny: {desc('Chain.Tiny')}" in prompt["Chain.tinier_tiny"]
    assert f"- Chain.Tinier: {desc('Chain.Tinier')}" in prompt["Chain.zero_tinier"]
    # the docstring and the module context are there too
    assert "A natural number is tiny when it is below three." in prompt["Chain.Tiny"]
    assert "Mathlib.Demo.Chain" in prompt["Chain.Tiny"]
    assert "def Chain.Tiny (n : ℕ) : Prop" in prompt["Chain.Tinier"]
    # Odd3's back-translation disagreed: not accepted, so odd3_tiny is not told Odd3's text
    assert "DESC[Chain.Odd3]" not in prompt["Chain.odd3_tiny"]
    assert f"- Chain.Tiny: {desc('Chain.Tiny')}" in prompt["Chain.odd3_tiny"]
    with store.session() as s:
        texts = {
            t.item: t
            for t in s.scalars(select(AgentText).where(AgentText.kind == "informal_statement"))
        }
        assert set(texts) == {
            "Chain.Tiny", "Chain.Tinier", "Chain.zero_tinier", "Chain.tinier_tiny",
            "Chain.Odd3", "Chain.odd3_tiny",
        }  # fmt: skip
        tiny = texts["Chain.Tiny"]
        assert tiny.status == "pending" and tiny.body == desc("Chain.Tiny")
        assert tiny.template_id == "informalize/statement@1" and len(tiny.template_hash) == 64
        assert tiny.run_id == summary.run_id and tiny.attempt_id is not None
        assert tiny.source_text == "def Tiny (n : ℕ) : Prop"
        assert tiny.extra["accepted"] is True
        summary_ = tiny.extra["summary"]
        assert summary_["text"].startswith("A natural number is tiny")
        assert "Apache-2.0" in summary_["attribution"] and "Mathlib" in summary_["attribution"]
        odd = texts["Chain.Odd3"]
        assert odd.extra["accepted"] is False
        assert "backtranslation:fail" in odd.extra["failed_checks"]
        checks = list(
            s.scalars(select(CheckResultRow).where(CheckResultRow.agent_text_id == odd.id))
        )
        bt = next(c for c in checks if c.check == "backtranslation")
        assert bt.verdict == "fail" and bt.evidence["differences"] == ["odd"]
        assert {c.check for c in checks} >= {"lint.trivial_goal", "backtranslation"}
        augs = list(s.scalars(select(AgentText).where(AgentText.kind == "augmentation")))
        # two augmentations for each of the five accepted statements, none for Odd3
        assert len(augs) == 10
        fr = [a for a in augs if a.extra["augmentation"] == "translation"]
        assert all(a.body.startswith("AUG-FR") for a in fr)
        assert all(a.item != "Chain.Odd3" for a in augs)


def test_unregistered_writer_refused(tmp_path, store):
    opts = InformalizeOptions(model="nobody", translator="trans", lean_dir=str(FIXTURE))
    with FakeServer(script()) as srv:
        st = Settings(llm=LLMSettings(base_url=srv.base_url))
        with pytest.raises(UnregisteredModel):
            asyncio.run(run_informalize(st, store, opts))
        assert srv.requests == []


def test_dependency_order_breaks_cycles_in_input_order():
    def d(name, deps):
        return Decl(id=name, name=name, kind="theorem", statement=": True", deps=deps)

    decls = [d("c", ["b"]), d("a", []), d("b", ["a", "z"]), d("x", ["y"]), d("y", ["x"])]
    assert [x.id for x in dependency_order(decls)] == ["a", "b", "c", "x", "y"]


def test_tactic_states_become_statements():
    goal = "α : Type u_1\nf : Set α → α\nhf : Function.Injective f\n⊢ False"
    assert goal_statement(goal) == (
        "(α : Type u_1) (f : Set α → α) (hf : Function.Injective f) : False"
    )
    assert goal_statement("x✝ : ℕ\n⊢ 0 ≤ 1") == ": 0 ≤ 1"
    assert goal_statement("no goal here") is None

    from types import SimpleNamespace

    # the same state twice gives one statement
    row = SimpleNamespace(module="Mathlib.SetTheory.Cantor", line=12, goals_before=[goal, goal])
    decls = decls_from_tactics([row])
    assert len(decls) == 1 and decls[0].origin == "tactic_state"
    assert decls[0].lean.startswith("theorem aug_12_0 (α : Type u_1)")


@pytest.mark.parametrize("old_schema", [False, True])
def test_tactic_augmentation_from_lean_scout_parquet(tmp_path, store, old_schema):
    from tests.importers.scout_data import write_tactics

    folder = write_tactics(tmp_path / "mathlib-tactics", old_schema=old_schema)
    generic = Script(
        models=["writer", "trans"],
        rules=[
            Rule(system=WRITE, reply="Two equals one plus one, as natural numbers: $2 = 1 + 1$."),
            Rule(system=BACK, reply="BACK: 2 = 1 + 1."),
            Rule(system=NLI, json={"equivalent": True, "differences": []}),
        ],
    )
    opts = InformalizeOptions(model="writer", translator="trans", tactics_dir=str(folder))
    with FakeServer(generic) as srv:
        st = Settings(llm=LLMSettings(base_url=srv.base_url))
        summary = asyncio.run(run_informalize(st, store, opts))
        prompt = _writes(srv.requests)[0]["body"]["messages"][-1]["content"]
    assert summary.done == 1
    assert "theorem aug_" in prompt and ": 2 = 1 + 1" in prompt
    with store.session() as s:
        t = s.scalar(select(AgentText).where(AgentText.kind == "informal_statement"))
    assert t.extra["stratum"] == "tactic_state" and t.extra["accepted"] is True
    assert t.source_text.endswith(": 2 = 1 + 1")


def test_cli_last_line_counts_verdicts_and_says_no_lean_ran(tmp_path, monkeypatch):
    # `math2 informalize` compiles nothing: its last line says so, and counts the statements
    # the checks did not accept by the battery's verdict (issue 34 §6).
    from math2.cli import app
    from tests.settings import cli_env

    with FakeServer(script()) as srv:
        runner = cli_env(tmp_path, monkeypatch, srv.base_url, models=("writer", "trans"))
        args = ["informalize", "--model", "writer", "--translator", "trans"]
        res = runner.invoke(app, [*args, "--lean-dir", str(FIXTURE)])
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in res.stdout.splitlines() if "written this time" in ln]
    assert line == (
        "run 1: 6 written this time (5 accepted by the checks, 1 not: fail 1), 0 stopped by an "
        "exception, 0 already finished; no Lean ran: the checks are the lints and trans's "
        "back-translation compared by trans"
    ), line
