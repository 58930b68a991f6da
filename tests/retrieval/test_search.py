"""Issue 23.2: one search (`math2.retrieval.search`) — hits with their declaration and node
resolved, the same hits from `math2 search`, the web's search page and the index endpoint."""

import html
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from math2.cli import app as cli
from math2.retrieval import ALL, NoIndex, Searcher, search
from math2.retrieval.index import build_index
from math2.store import Mention
from math2.web import create_app
from tests.retrieval.conftest import link_node

QUERIES = [
    ("idf apply", None),
    ("Demo.two_eq (2 : ℕ) = 1 + 1", ALL),
    ("one plus one equals two ( 1 + 1 ) = 2", ALL),
    ("addition commutes", "setmm"),
    ("identity function", "mathlib"),
]


def _cli_names(root: Path, db: Path, query: str, library: str | None, monkeypatch) -> list:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{db}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(root))
    args = ["search", query, "-k", "5"] + (["--library", library] if library else [])
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    lines = re.findall(r"^\s*\d+\. (\S+)(?: \((\w+)\))?", res.output, re.M)
    return [(name, lib or (library or "mathlib")) for name, lib in lines]


def _web_names(client: TestClient, query: str, library: str | None) -> list:
    params = {"q": query, "k": 5} | ({"library": library} if library else {})
    page = client.get("/search", params=params)
    assert page.status_code == 200
    names = [html.unescape(n) for n in re.findall(r'class="decl">([^<]+)</a>', page.text)]
    libs = re.findall(r'class="meta library">\((\w+)\)', page.text)
    return list(zip(names, libs or [library or "mathlib"] * len(names), strict=True))


def test_the_cli_and_the_web_give_the_same_hits(two_libraries, tmp_path, monkeypatch) -> None:
    store, root = two_libraries
    with TestClient(create_app(store, root, secret="s")) as client:
        for query, library in QUERIES:
            want = [(h.name, h.library) for h in search(query, library, 5, index_dir=root)]
            assert want, query
            assert _web_names(client, query, library) == want, query
            assert _cli_names(root, tmp_path / "math2.db", query, library, monkeypatch) == want
    # a query over every library: Mathlib's answer above set.mm's noise, each hit labelled
    hits = search("Demo.two_eq (2 : ℕ) = 1 + 1", ALL, 4, index_dir=root)
    assert (hits[0].library, hits[0].name) == ("mathlib", "Demo.two_eq")
    assert {h.library for h in hits} == {"mathlib", "setmm"}


def test_hits_carry_their_declaration_and_node(two_libraries) -> None:
    store, root = two_libraries
    node_id = link_node(store, "Demo.two_eq", "wd:Q1", "two is one plus one", bind=True)
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Demo.two_eq"))
        statement, module = m.statement, m.module
    [hit] = search("Demo.two_eq", "mathlib", 1, index_dir=root, store=store)
    assert hit.name == "Demo.two_eq" and hit.declaration is not None
    assert hit.statement == hit.declaration.statement == statement
    assert hit.declaration.module == module and hit.declaration.kind
    assert hit.node is not None and (hit.node.id, hit.node.key) == (node_id, "wd:Q1")
    # without a store: what the index keeps (no database opened), no node
    [bare] = search("Demo.two_eq", "mathlib", 1, index_dir=root)
    assert bare.declaration is None and bare.node is None
    assert bare.statement and bare.statement in " ".join(statement.split())


def test_what_to_build_when_there_is_no_index(two_libraries, tmp_path) -> None:
    _, root = two_libraries
    with pytest.raises(NoIndex, match="No search index is built \\(looked in"):
        search("x", index_dir=tmp_path / "empty")
    with pytest.raises(NoIndex, match="math2 index build --library afp"):
        search("x", "afp", index_dir=root)
    assert Searcher(root).scope(ALL) == ["mathlib", "setmm"]
    assert Searcher(root).scope(None) == ["mathlib"]


def test_an_index_of_an_older_text_version_is_not_silently_read(two_libraries, tmp_path) -> None:
    """An index built before issue 33 (text v8) has no body, notation or name parts: the search
    says to rebuild it instead of answering without them."""
    store, _ = two_libraries
    old = tmp_path / "old"
    build_index(store, old / "setmm", "setmm", text_version=8)
    with pytest.raises(NoIndex, match=r"older math2 \(index text v8, this one reads v9\).*"
                       r"math2 index build --library setmm"):  # fmt: skip
        search("x", "setmm", index_dir=old)
    build_index(store, old / "setmm", "setmm")  # rebuilt at the current version: read
    assert search("addition commutes", "setmm", 1, index_dir=old)


def test_a_hit_shows_kind_module_doc_and_successor_without_a_store(
    two_libraries, tmp_path, monkeypatch
) -> None:
    """Issue 45 §5: kind, module, the docstring's first line and a renamed declaration's
    successor, read from the index alone; `--json` for scripts, with ranks and no score."""
    import json

    _, root = two_libraries
    [idf] = search("Demo.idf", "mathlib", 1, index_dir=root)
    assert idf.name == "Demo.idf"
    assert (idf.card.kind, idf.card.module) == ("def", "Mathlib.Algebra.Demo")
    assert idf.card.doc == "The identity, as a definition."
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'none.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(root))
    res = CliRunner().invoke(cli, ["search", "add_comm_old", "-k", "3", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    first = rows[0]
    assert (first["rank"], first["name"], first["renamed_from"]) == (
        1,
        "Demo.add_comm'",
        "Demo.add_comm_old",
    )
    assert first["kind"] == "theorem" and "score" not in first and first["order_score"] > 0
    assert first["informal"] is None and first["informal_origin"] is None
    text = CliRunner().invoke(cli, ["search", "Demo.idf", "-k", "1"])
    assert "def · Mathlib.Algebra.Demo" in text.output
    assert "The identity, as a definition." in text.output
    shown = CliRunner().invoke(cli, ["search", "add_comm_old", "-k", "1"]).output
    assert "renamed: Demo.add_comm_old is deprecated, use Demo.add_comm'" in shown


def test_a_deprecated_hit_whose_successor_is_not_followed_says_so(two_libraries) -> None:
    """A deprecated declaration shown as itself (its successor not followed) says since when
    and what to use, with or without the store."""
    from math2.retrieval import Searcher
    from math2.retrieval.scope import LibraryHit

    store, root = two_libraries
    for searcher in (Searcher(root), Searcher(root, store)):
        ix = searcher.index("mathlib")
        ix.renames = False
        [old] = [h for h in ix.search("add_comm_old", k=3) if h.name == "Demo.add_comm_old"]
        [hit] = searcher.resolve([LibraryHit("mathlib", old, old.score)], {"mathlib": ix})
        row = hit.summary(1)
        assert (row.deprecated, row.successor) == ("2026-01-01", "add_comm'")
        assert row.kind == "theorem" and row.renamed_from is None
        fresh = searcher.search("add_comm'", "mathlib", 1)[0].summary(1)
        assert fresh.deprecated is None and fresh.successor is None


def test_a_librarys_index_reads_no_other_librarys_files(two_libraries, tmp_path, monkeypatch):
    """Issue 45 §6 / 46 §2: set.mm's index, built where a Mathlib checkout is configured,
    opens and lists nothing under it (it read all of Mathlib's files for notation)."""
    import builtins
    import os
    import pathlib

    from tests.retrieval.conftest import FIX

    store, _ = two_libraries
    touched: list[str] = []
    real_open, real_path_open, real_scandir = builtins.open, pathlib.Path.open, os.scandir

    def note(path) -> None:
        if str(FIX) in os.fspath(path):
            touched.append(os.fspath(path))

    def spy_open(file, *a, **kw):
        if isinstance(file, (str, os.PathLike)):
            note(file)
        return real_open(file, *a, **kw)

    def spy_path_open(self, *a, **kw):
        note(self)
        return real_path_open(self, *a, **kw)

    def spy_scandir(path="."):
        note(path)
        return real_scandir(path)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(pathlib.Path, "open", spy_path_open)
    monkeypatch.setattr(os, "scandir", spy_scandir)
    build_index(store, tmp_path / "setmm", "setmm", mathlib_dir=FIX)
    monkeypatch.undo()
    assert touched == []
    # the same spy sees Mathlib's own index read its checkout
    monkeypatch.setattr(pathlib.Path, "open", spy_path_open)
    monkeypatch.setattr(os, "scandir", spy_scandir)
    build_index(store, tmp_path / "mathlib", "mathlib", mathlib_dir=FIX)
    monkeypatch.undo()
    assert touched
