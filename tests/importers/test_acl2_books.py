"""ACL2 books as separate worlds with licences per folder and per file (issue 43 §3), on books
written for math2 (`fixtures/systems/acl2-worlds`): a folder's LICENSE (the MIT text, never
the word), "Version 2 of the GNU General Public License", an MIT text in a header; two books
proving theorems of one name are two mentions; an exported theorem wins over a `local` one of
its name in its book."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.acl2 import statement_licence
from math2.importers.registry import load_builtin_importers
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention, Source
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES

ROOT = FIXTURES / "systems" / "acl2-worlds"


@pytest.fixture
def imported(sqlite_store, tmp_path: Path):
    manifest = load_manifest(pinned_manifest(tmp_path, {"acl2-books": "fixture0"}))
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    res = load_builtin_importers()["acl2-books"].run(sqlite_store, manifest.get("acl2-books"), ROOT)
    with sqlite_store.session() as s:
        sid = s.scalar(select(Source.id).where(Source.name == "acl2-books"))
        rows = s.scalars(select(Mention).where(Mention.source_id == sid)).all()
        s.expunge_all()
    return res, {m.name: m for m in rows}


def test_books_are_separate_worlds(imported) -> None:
    res, rows = imported
    one, two = rows["arith/plus:ACL2::PLUS-COMM"], rows["arith2/plus:ACL2::PLUS-COMM"]
    assert one.statement == "(equal (+ a b) (+ b a))"
    assert two.statement.startswith("(implies (and (natp a) (natp b))")
    assert one.extra["symbol"] == two.extra["symbol"] == "ACL2::PLUS-COMM"
    assert "names bound again (kept once)" not in res.counts
    # in one book, the exported theorem wins over the local lemma of the same name
    helper = rows["lists/len:ACL2::LEN-HELPER"]
    assert helper.extra["local"] is False and helper.statement.startswith("(implies (consp x)")
    assert helper.extra["also_at"] == ["lists/len:5"]


def test_licences_per_folder_and_per_file(imported) -> None:
    res, rows = imported
    lic = {name.split(":")[0]: (m.licence, m.extra["licence_source"]) for name, m in rows.items()}
    assert lic == {
        "arith/plus": ("BSD-3-Clause", "stated"),
        "arith2/plus": ("BSD-3-Clause", "stated"),
        "bsdtext/b": ("BSD-2-Clause", "folder"),  # the two-clause text, matched whole
        "gplv2/rev": ("GPL-2.0-only", "stated"),  # "Version 2 of the GNU General Public License"
        "lists/len": ("MIT", "folder"),  # the folder's LICENSE: the MIT text, not the word
        "lists/deep/app": ("MIT", "folder"),  # the nearest LICENSE above
        "mitheader/logs": ("MIT", "stated"),  # the MIT text in the header
    }
    # books/LICENSE defers to folders and files: plain/none.lisp states nothing
    assert res.counts["not imported (licence none stated)"] == 1
    assert res.counts["not imported (licence unrecognised)"] == 1  # oddterms/LICENSE
    assert any(
        "books/oddterms/LICENSE: These books may be used under the Frobnicator" in n
        for n in res.notes
    )


def test_statement_shapes() -> None:
    assert statement_licence("under Version 2 of the GNU General Public License") == (
        "GPL-2.0-only"
    )
    assert (
        statement_licence(
            "Version 3 of the GNU Lesser General Public License, or (at your option) any later"
        )
        == "LGPL-3.0-or-later"
    )
    assert (
        statement_licence(
            "Permission is hereby granted, free of charge, to any person "
            "obtaining a copy of this software"
        )
        == "MIT"
    )
    assert statement_licence("License: see the LICENSE file") is None
