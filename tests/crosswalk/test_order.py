"""Order-independent build: any order of imports, with clustering and selection run between
them (a build that failed on one source and was rerun), exports the same rows byte for byte."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from math2.crosswalk.cluster import cluster
from math2.crosswalk.select import select_nodes
from math2.importers.mathlib import import_lean_library
from math2.importers.setmm import import_setmm
from math2.importers.theorem_lists import import_mathlib_lists, import_thousand_plus
from math2.report import export_rows
from math2.sources import load_manifest, sync_manifest
from math2.store import Node, Store
from tests.build_helpers import SMALL_MM
from tests.conftest import REPO

MANIFEST = load_manifest(REPO / "manifests" / "sources.yaml")
FIXTURE = REPO / "tests" / "fixtures" / "leanproj"

THM = {
    "Q11518": """---
# Pythagorean theorem

wikidata: Q11518
msc_classification: '51'
lean:
- status: formalized
  library: L
  identifiers: [Demo.two_eq]
metamath:
  - status: formalized
    library: L
    identifiers: [pythag]
---
""",
    "Q42": """---
# Commutativity of addition

wikidata: Q42
lean:
- status: formalized
  library: L
  identifiers: ["Demo.add_comm'"]
---
""",
}
LIST_1000 = """Q42:
  title: Addition is commutative
  decl: Demo.add_comm'
Q11518:
  title: Pythagoras
  decl: Demo.two_eq
Q7:
  title: Only in the 1000 list
  decl: Demo.idf_apply
"""
LIST_100 = """1:
  title: The sum of two numbers does not depend on their order
  decl: Demo.add_comm'
"""


def _data(root: Path) -> dict[str, Path]:
    (root / "set.mm").write_text(SMALL_MM.replace("id $p", "pythag $p"))
    thm = root / "1000-plus" / "_thm"
    thm.mkdir(parents=True)
    for q, text in THM.items():
        (thm / f"{q}.md").write_text(text)
    docs = root / "docs"
    docs.mkdir()
    (docs / "1000.yaml").write_text(LIST_1000)
    (docs / "100.yaml").write_text(LIST_100)
    return {
        "setmm": root / "set.mm",
        "mathlib": FIXTURE,
        "1000-plus": root / "1000-plus",
        "mathlib-theorem-lists": docs,
    }


IMPORT = {
    "setmm": import_setmm,
    "mathlib": import_lean_library,
    "1000-plus": import_thousand_plus,
    "mathlib-theorem-lists": import_mathlib_lists,
}


def _later_steps(store: Store) -> None:
    with store.session() as s:
        cluster(s)
        select_nodes(s, "mathlib")


def _build(store: Store, data: dict[str, Path], order: list[str], between: list[bool]) -> dict:
    with store.session() as s:
        sync_manifest(s, MANIFEST)
    for name, step in zip(order, between, strict=True):
        IMPORT[name](store, MANIFEST.get(name), data[name])
        if step:
            _later_steps(store)
    _later_steps(store)
    with store.session() as s:
        return export_rows(s)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict[str, Path], dict]:
    root = tmp_path_factory.mktemp("order")
    data = _data(root)
    store = Store(f"sqlite:///{root / 'ref.db'}")
    store.upgrade()
    rows = _build(store, data, sorted(IMPORT), [False] * len(IMPORT))
    store.close()
    return data, rows


def _diff(a: dict, b: dict) -> list[str]:
    out = []
    for table in a:
        out += [f"{table} - {r}" for r in sorted(set(a[table]) - set(b[table]))]
        out += [f"{table} + {r}" for r in sorted(set(b[table]) - set(a[table]))]
    return out[:10]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    order=st.permutations(sorted(IMPORT)), between=st.lists(st.booleans(), min_size=4, max_size=4)
)
def test_any_import_order_gives_the_same_rows(reference, order, between) -> None:
    data, want = reference
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'c.db'}")
        store.upgrade()
        got = _build(store, data, list(order), between)
        store.close()
    assert got == want, _diff(want, got)


def test_reverse_order_with_steps_between_on_each_backend(store: Store, reference) -> None:
    data, want = reference
    got = _build(store, data, sorted(IMPORT, reverse=True), [True] * len(IMPORT))
    assert got == want, _diff(want, got)
    with store.session() as s:
        q42 = s.query(Node).filter(Node.key == "wd:Q42").one()
        assert (q42.title, q42.selected_by) == ("Commutativity of addition", "1000-plus")
        q7 = s.query(Node).filter(Node.key == "wd:Q7").one()
        assert (q7.title, q7.selected_by) == ("Only in the 1000 list", "mathlib-theorem-lists")
        assert s.query(Node).filter(Node.key.like("decl:mathlib:Demo.add_comm%")).count() == 0
