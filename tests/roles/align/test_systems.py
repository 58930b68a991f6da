"""Candidate pairs between Mathlib and the six other systems (issue 43 §6), on a small store
written for math2: by name (`Nat.add_comm` in Rocq and Mathlib), by the lists' facts (the node
says HOL Light and HOL4 formalize it: the system's library searched), the share of nodes whose
human link is in the top k; then `math2 align` (the fake model server) judges them per system,
and a `same` edge to another system's declaration binds nothing."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from math2.config import LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.align import AlignOptions, run_align
from math2.roles.align.systems import name_keys, propose_for_systems
from math2.store.models import Binding, Crosswalk, Node
from tests.roles.align.fixture import JUDGE, _source, mention, same, verdict


def _store(store) -> dict[str, int]:
    ids: dict[str, int] = {}
    with store.session() as s:
        add_model(s, "judge")
        mathlib = _source(s, "mathlib", "lean4")
        lists = _source(s, "1000-plus", "multiple", kind="list")
        w100 = _source(s, "wiedijk-100", "multiple", kind="list")
        rocq = _source(s, "rocq-stdlib", "rocq")
        hol = _source(s, "hol-light", "hol-light")
        hol4 = _source(s, "hol4", "hol4")
        add = mention(s, mathlib, "Nat.add_comm", "∀ (n m : ℕ), n + m = m + n")
        mul = mention(s, mathlib, "Nat.mul_comm", "∀ (n m : ℕ), n * m = m * n")
        for src, name, st in [
            (rocq, "Stdlib.Arith.PeanoNat.Nat.add_comm", "forall n m, n + m = m + n"),
            (rocq, "Stdlib.Lists.List.app_nil_r", "forall l, l ++ [] = l"),
            (hol, "ADD_SYM", "!m n. m + n = n + m"),
            (hol, "ADD_ASSOC", "!m n p. m + (n + p) = (m + n) + p"),
            (hol4, "MULT_COMM", "!m n. m * n = n * m"),
        ]:
            ids[name] = mention(s, src, name, st).id
        a = Node(
            key="wd:Q1",
            title="Commutativity of addition",
            extra={
                "lists": {
                    "1000-plus": {"formalizations": [{"system": "hol-light"}, {"system": "rocq"}]}
                }
            },
        )
        b = Node(
            key="w100:2", extra={"lists": {"wiedijk-100": {"formalizations": [{"system": "hol4"}]}}}
        )
        s.add_all([a, b])
        s.flush()
        s.add_all([
            Crosswalk(node_id=a.id, system="lean4", target=add.name, mention_id=add.id,
                      source_id=lists.id, status="accepted"),
            Crosswalk(node_id=a.id, system="hol-light", target="ADD_SYM",
                      source_id=lists.id, status="accepted"),  # the list's human link
            Crosswalk(node_id=b.id, system="lean4", target=mul.name, mention_id=mul.id,
                      source_id=w100.id, status="accepted"),
        ])  # fmt: skip
        ids["a"], ids["b"] = a.id, b.id
    return ids


def _search(ids):
    hits = {
        "hol-light": ["ADD_SYM", "ADD_ASSOC"],
        "hol4": ["MULT_COMM"],
        "rocq-stdlib": ["Stdlib.Arith.PeanoNat.Nat.add_comm"],
    }
    asked: list[tuple[str, str]] = []

    def search(library: str, query: str, k: int):
        asked.append((library, query))
        return [(n, ids[n]) for n in hits.get(library, [])][:k]

    return search, asked


def test_names_keys() -> None:
    assert name_keys("Stdlib.Arith.PeanoNat.Nat.add_comm") == ("nat.add_comm", "add_comm")
    assert name_keys("Nat.add_comm") == ("nat.add_comm", "add_comm")
    assert name_keys("arith/top:ACL2::PLUS-COMM") == ("acl2.plus_comm", "plus_comm")
    assert name_keys("ADD_SYM") == ("add_sym", "add_sym")


def test_candidates_per_system_then_align(sqlite_store) -> None:
    ids = _store(sqlite_store)
    search, asked = _search(ids)
    with sqlite_store.session() as s:
        got = {c.system: c for c in propose_for_systems(s, search, k=3)}
    assert sorted(got) == ["hol-light", "hol4", "rocq"]  # no library of the others stored
    assert (got["rocq"].by_name, got["rocq"].by_facts) == (1, 0)  # the name, found once
    hol = got["hol-light"]
    assert (hol.by_name, hol.by_facts, hol.nodes_with_facts) == (0, 1, 1)  # ADD_ASSOC only
    assert (hol.human_links, hol.human_in_top) == (1, 1)  # ADD_SYM is in the top 3
    assert (got["hol4"].by_facts, got["hol4"].human_links) == (1, 0)
    queries = dict(asked)
    assert "Commutativity of addition" in queries["hol-light"] and "n + m" in queries["hol-light"]
    with sqlite_store.session() as s:
        rows = {(c.system, c.target): c for c in s.scalars(select(Crosswalk))}
        assert rows[("rocq", "Stdlib.Arith.PeanoNat.Nat.add_comm")].node_id == ids["a"]
        assert rows[("hol4", "MULT_COMM")].node_id == ids["b"]
        assert rows[("hol4", "MULT_COMM")].mention_id == ids["MULT_COMM"]
        assert {r.status for k, r in rows.items() if k[0] != "lean4" and k[1] != "ADD_SYM"} == {
            "candidate"
        }
        again = propose_for_systems(s, search, k=3)  # nothing twice
        assert sum(c.candidates for c in again) == 0
    script = Script(models=["judge"], rules=[
        Rule(system=JUDGE, user=r"PeanoNat\.Nat\.add_comm", json=same("both: n + m = m + n")),
        Rule(system=JUDGE, user=r"ADD_ASSOC", json=verdict("different", "assoc vs comm", [])),
        Rule(system=JUDGE, user=r"MULT_COMM", json=same()),
    ])  # fmt: skip
    settings = Settings(llm=LLMSettings(concurrency=2))
    judged = {}
    with FakeServer(script) as srv:
        settings.llm.base_url = srv.base_url
        for dataset in ("rocq-stdlib", "hol-light", "hol4"):
            summary = asyncio.run(
                run_align(settings, sqlite_store, AlignOptions(model="judge", dataset=dataset))
            )
            judged[dataset] = (summary.done, summary.failed)
    assert judged == {"rocq-stdlib": (1, 0), "hol-light": (1, 0), "hol4": (1, 0)}
    with sqlite_store.session() as s:
        st = {(c.system, c.target): c.status for c in s.scalars(select(Crosswalk))}
        assert st[("rocq", "Stdlib.Arith.PeanoNat.Nat.add_comm")] == "accepted"
        assert st[("hol4", "MULT_COMM")] == "accepted"
        assert st[("hol-light", "ADD_ASSOC")] == "candidate"
        assert s.scalar(select(Binding)) is None  # an edge to Rocq or HOL4 binds no Lean


def test_cli_align_systems(tmp_path, monkeypatch) -> None:
    """`math2 align --systems`: counts per system (no index built: names only, said), then
    each system's candidates judged."""
    from typer.testing import CliRunner

    from math2.cli import app
    from math2.store import Store

    db = tmp_path / "math2.db"
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    _store(store)
    script = Script(models=["judge"], rules=[Rule(system=JUDGE, user=r"add_comm", json=same())])
    with FakeServer(script) as srv:
        for k, v in {
            "MATH2_DB_URL": f"sqlite:///{db}",
            "MATH2_CONFIG": str(tmp_path / "none.toml"),
            "MATH2_RETRIEVAL__INDEX_DIR": str(tmp_path / "index"),
            "MATH2_LLM__BASE_URL": srv.base_url,
        }.items():
            monkeypatch.setenv(k, v)
        res = CliRunner().invoke(app, ["align", "--model", "judge", "--systems"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "rocq (rocq-stdlib): 1 new candidates, 1 by name, no search index" in text
    assert "hol-light (hol-light): 0 new candidates, 0 by name, no search index" in text
    assert "1 judged (rocq) this time (accepted: 1)" in text
