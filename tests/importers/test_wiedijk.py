"""Wiedijk's 100 theorems, facts only, on a page written for math2 in the structure of the list's
page (not a copy of it): which theorem has a formalization in which system, on the `w100:N`
nodes and shared to the 1000+ node that names the same Lean declaration; no text of the list
is stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.crosswalk.cluster import cluster
from math2.errors import InputError
from math2.importers.theorem_lists import import_mathlib_lists
from math2.importers.wiedijk import import_wiedijk, parse_page, share_facts
from math2.report import export_rows
from math2.sources import load_manifest, sync_manifest
from math2.store import Node, TextRecord
from tests.conftest import FIXTURES, REPO

PAGE = FIXTURES / "wiedijk" / "page.html"


@pytest.fixture
def corpus(sqlite_store):
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    return sqlite_store, manifest


def test_parse_the_page() -> None:
    facts = parse_page(PAGE)
    assert [(f.number, f.systems) for f in facts] == [
        (1, ["isabelle", "hol-light", "lean4", "megalodon"]),  # `Megalodon: statement`
        (2, []),  # not formalized
        (3, ["rocq", "acl2", "isabelle"]),  # Coq is Rocq; nqthm/ACL2 is ACL2
    ]
    assert facts[0].unknown == ["Frobnicator"]


def test_facts_on_the_nodes_and_no_text(corpus) -> None:
    store, manifest = corpus
    res = import_wiedijk(store, manifest.get("wiedijk-100"), PAGE)
    assert res.counts["entries"] == 3 and res.counts["entries with isabelle"] == 2
    assert any("Frobnicator" in n for n in res.notes)
    assert res.counts["duplicate keys"] == 0  # the note of unknown systems is no duplicate
    with store.session() as s:
        node = s.scalar(select(Node).where(Node.key == "w100:3"))
        facts = node.extra["lists"]["wiedijk-100"]
        assert facts["number"] == 3
        assert [f["system"] for f in facts["formalizations"]] == ["rocq", "acl2", "isabelle"]
        assert node.title is None
        rows = json.dumps(export_rows(s), ensure_ascii=False)
        assert s.scalar(select(TextRecord)) is None
    for text in ("fixture theorem", "A. Person", "Person"):  # no text of the list
        assert text not in rows
    again = import_wiedijk(store, manifest.get("wiedijk-100"), PAGE)
    assert again.skipped_already_done


def test_a_changed_page_replaces_the_facts(corpus, tmp_path: Path) -> None:
    store, manifest = corpus
    import_wiedijk(store, manifest.get("wiedijk-100"), PAGE)
    newer = tmp_path / "page.html"
    newer.write_text(
        PAGE.read_text().replace("<i>Second fixture theorem, not formalized</i>",
                                 "Second<ul><li>Mizar, H. Person</li></ul>")
    )  # fmt: skip
    res = import_wiedijk(store, manifest.get("wiedijk-100"), newer)
    assert any("the page changed since the last read" in n for n in res.notes)
    with store.session() as s:
        node = s.scalar(select(Node).where(Node.key == "w100:2"))
        got = [f["system"] for f in node.extra["lists"]["wiedijk-100"]["formalizations"]]
        assert got == ["mizar"]


def test_facts_shared_with_the_1000_plus_node(corpus, tmp_path: Path) -> None:
    store, manifest = corpus
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "100.yaml").write_text("1:\n  title: One\n  decl: Demo.add_comm'\n")
    (docs / "1000.yaml").write_text("Q42:\n  title: Commutativity\n  decl: Demo.add_comm'\n")
    import_wiedijk(store, manifest.get("wiedijk-100"), PAGE)  # in either order
    import_mathlib_lists(store, manifest.get("mathlib-theorem-lists"), docs)
    with store.session() as s:
        cluster(s)
        assert share_facts(s) == 1
        assert share_facts(s) == 1  # idempotent
        s.commit()
    with store.session() as s:
        wd = s.scalar(select(Node).where(Node.key == "wd:Q42"))
        shared = wd.extra["lists"]["wiedijk-100"]
        assert shared["via"] == "w100:1" and shared["number"] == 1
        assert [f["system"] for f in shared["formalizations"]] == [
            "isabelle",
            "hol-light",
            "lean4",
            "megalodon",
        ]


def test_not_the_page(tmp_path: Path) -> None:
    bad = tmp_path / "x.html"
    bad.write_text("<html><body><p>nothing</p></body></html>")
    with pytest.raises(InputError, match="no ordered list"):
        parse_page(bad)
    shutil.copy(PAGE, tmp_path / "ok.html")
    assert len(parse_page(tmp_path / "ok.html")) == 3
