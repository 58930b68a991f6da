"""A private declaration of the library is invisible outside its file: not a name a user's
declaration can shadow, nor a namespace, class or predicate of the tables — read from sources
and from the store alike (the fixture library's `private abbrev I`, shaped as the Mathlib helper
that flagged ProofNet's `abbrev I`), while the public names beside it are caught as before. And
the store's name lookups take their index without statistics (an un-ANALYZEd SQLite store)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from math2.importers.mathlib import read_checkout
from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.library import LibraryNames, LibraryTables, store_tables
from tests.lean.library_fixture import FIXTURE, LIBRARY
from tests.lean.test_library_tables import _store_with_fixture

H = "import Mathlib\n"


def _shadowing(name: str, tables: LibraryTables) -> list[str]:
    code = H + f"abbrev {name} : Type := Unit\ntheorem foo : 1 = 1 := by sorry"
    r = check_code(code, name="foo", trust=ContextTrust.BENCHMARK, known_name=tables)
    assert r.ok, [v.detail for v in r.violations]
    return [f.detail for f in r.flags if f.rule == "shadowing"]


def _private_is_invisible(tables: LibraryTables) -> None:
    assert not tables("I") and not _shadowing("I", tables)  # Mathlib-shaped `private abbrev I`
    assert _shadowing("J", tables) == ["`J` is named like the library's `J`"]  # public: caught
    assert tables("Real.sqrt") and tables("inst")
    assert not tables("Hidden.Space.helper") and not tables.namespace("Hidden.Space")
    assert not tables.namespace("Hidden") and tables.namespace("Real")
    assert tables.class_info("Hidden.Secretive") is None and tables.class_info("Nontrivial")
    assert not tables.predicate("Hidden.secretly")
    # a private structure's and class's fields are private too (Lean names them under its
    # private name), while a public structure's fields stay the library's
    for field in ("Scratch.carrier", "Scratch.size", "Hidden.Tally.tally"):
        assert not tables(field) and not _shadowing(field, tables), field
    assert not tables.namespace("Scratch") and tables.class_info("Hidden.Tally") is None
    assert tables("Real.cauchy") and _shadowing("Real.cauchy", tables)


def test_private_names_from_sources() -> None:
    _private_is_invisible(LIBRARY)


def test_private_names_from_the_store(tmp_path: Path, store_url: str) -> None:
    store = _store_with_fixture(tmp_path, store_url)
    try:
        _private_is_invisible(store_tables(store))
    finally:
        store.close()


PAIR = FIXTURE.parent / "lean_private_public"  # a private `Clash.helper`, then a public one


def test_a_public_name_wins_over_a_private_one_read_first(tmp_path: Path, store_url: str) -> None:
    """Lean allows a private `X.foo` in one file and a public `X.foo` in another: whichever is
    read first, the library's `X.foo` is the public one, stored as one a user's name shadows."""
    data = read_checkout(PAIR)
    (rec,) = [r for r in data.records if r.name == "Clash.helper"]
    assert rec.allow_completion and rec.module == "Mathlib.B"
    # the tagged public `Clash.mul_swap` (not the private one read first) gives the twin
    twins = {r.name: r for r in data.records if r.extra.get("to_additive_of")}
    assert list(twins) == ["Clash.add_swap"] and twins["Clash.add_swap"].allow_completion
    assert data.counts["duplicate names"] == 2  # the two private ones
    store = _store_with_fixture(tmp_path, store_url, fixture=PAIR)
    try:
        tables = store_tables(store)
        assert tables("Clash.helper") and tables("Clash.add_swap") and tables.namespace("Clash")
        for kw in ("theorem", "def"):
            body = "1 = 1 := rfl" if kw == "theorem" else "Nat := 2"
            code = H + f"{kw} Clash.helper : {body}\ntheorem foo : 1 = 1 := by sorry"
            r = check_code(code, name="foo", trust=ContextTrust.BENCHMARK, known_name=tables)
            assert r.ok, [v.detail for v in r.violations]
            assert [f.detail for f in r.flags if f.rule == "shadowing"] == [
                "`Clash.helper` is named like the library's `Clash.helper`"
            ], (kw, r.flags)
    finally:
        store.close()


@pytest.mark.parametrize("space", [False, True])
def test_the_lookups_use_the_index_without_statistics(tmp_path: Path, space: bool) -> None:
    store = _store_with_fixture(tmp_path)
    names = LibraryNames(store)
    sql = names.query("Real" if space else "Real.sqrt", space=space).compile(
        store.engine, compile_kwargs={"literal_binds": True}
    )
    with store.engine.connect() as c:
        assert not c.scalar(text("SELECT count(*) FROM sqlite_master WHERE name='sqlite_stat1'"))
        plan = [row[-1] for row in c.execute(text(f"EXPLAIN QUERY PLAN {sql}"))]
    store.close()
    on_mentions = [p for p in plan if "mentions" in p]
    assert on_mentions and all(
        "USING COVERING INDEX ix_mentions_library_names" in p for p in on_mentions
    ), plan
    assert not [p for p in plan if p.startswith("SCAN mentions")], plan
