"""A store's library tables are read only under the rule its Lean libraries were imported under
(`math2.lean.stored_rule`): a store imported by an older math2 (its private structure's fields
stored as visible names) is refused by every path that gives a verdict with the tables, with
the way out named; importing it again reads it under this rule; a bump rereads an unchanged
declaration's visibility; Lean's own flag (lean_scout) is read as it is."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import select

from math2.config import load_settings
from math2.importers.mathlib import import_lean_library
from math2.lean.library import TABLES_RULE, store_tables
from math2.lean.stored_rule import StaleTables
from math2.services import make_checker
from math2.services.lean import library_tables
from math2.sources import load_manifest
from math2.store import Mention, Run
from tests.importers.test_mathlib import manifest_with_pins, sync
from tests.lean.library_fixture import FIXTURE
from tests.lean.test_library_tables import _store_with_fixture

FIELD = "Scratch.carrier"  # a field of the fixture library's `private structure Scratch`


def _as_imported_before(store: Any, params: dict[str, Any]) -> None:
    """Make the store look imported by the math2 before tables-3: the private structure's
    field written as a visible name, the run's params as `params` says."""
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == FIELD))
        m.allow_completion = True
        m.extra = {k: v for k, v in (m.extra or {}).items() if k != "modifiers"}
        run = s.scalar(select(Run).where(Run.job == "import", Run.key.like("mathlib@%")))
        old = {k: v for k, v in run.params.items() if k != "tables_rule"}
        run.params = {**old, **params}


def test_an_import_records_its_rule_and_is_read(tmp_path: Path, store_url: str) -> None:
    store = _store_with_fixture(tmp_path, store_url)
    try:
        with store.session() as s:
            run = s.scalar(select(Run).where(Run.job == "import", Run.key.like("mathlib@%")))
            assert run.params["tables_rule"] == TABLES_RULE == "tables-3"
        tables = store_tables(store)
        assert not tables(FIELD) and tables("Real.cauchy")
    finally:
        store.close()


@pytest.mark.parametrize("recorded", [None, "tables-2"])
def test_a_store_imported_under_an_older_rule_is_refused(
    tmp_path: Path, store_url: str, recorded: str | None
) -> None:
    store = _store_with_fixture(tmp_path, store_url)
    try:
        digest = "checkout; read by lean_source 2"  # the scanner before tables-3
        _as_imported_before(
            store, {"digest": digest, **({"tables_rule": recorded} if recorded else {})}
        )
        was = recorded or "tables-2 or earlier (not recorded then)"
        with pytest.raises(StaleTables) as err:
            store_tables(store)
        msg = str(err.value)
        assert msg.startswith("re-import mathlib: mathlib@") and f"read under {was}" in msg
        assert "math2 import mathlib --force" in msg and "tables-3" in msg
        # every verdict path reads the tables through these: none gives a verdict
        with pytest.raises(StaleTables):
            library_tables(load_settings(), store)
        with pytest.raises(StaleTables):
            make_checker(load_settings(), store, lean_backend=cast(Any, object()), use_cache=False)
    finally:
        store.close()


def test_importing_again_reads_the_store_under_this_rule(tmp_path: Path) -> None:
    store = _store_with_fixture(tmp_path)
    try:
        with store.session() as s:
            run = s.scalar(select(Run).where(Run.job == "import", Run.key.like("mathlib@%")))
            tree = run.params["digest"].split("; read by ")[0]
        _as_imported_before(store, {"digest": f"{tree}; read by lean_source 2"})
        with pytest.raises(StaleTables):
            store_tables(store)
        # `math2 import mathlib` reads a checkout read by an older scanner again (no --force)
        manifest = load_manifest(tmp_path / "sources.yaml")
        import_lean_library(store, manifest.get("mathlib"), tmp_path / "library")
        tables = store_tables(store)
        assert not tables(FIELD) and tables("Real.cauchy")
    finally:
        store.close()


def test_lean_scouts_own_flag_is_read_as_it_is(tmp_path: Path) -> None:
    store = _store_with_fixture(tmp_path)
    try:
        _as_imported_before(store, {"route": "lean_scout"})  # Lean's allowCompletion: exact
        assert store_tables(store)("Real.cauchy")
    finally:
        store.close()


def test_a_bump_reads_an_unchanged_declarations_visibility_again(sqlite_store, tmp_path) -> None:
    root = tmp_path / "library"
    shutil.copytree(FIXTURE, root)
    import_lean_library(sqlite_store, sync(sqlite_store, manifest_with_pins(tmp_path, "aaa")), root)
    _as_imported_before(sqlite_store, {})
    entry = sync(sqlite_store, manifest_with_pins(tmp_path, "aaa", "bbb"))
    res = import_lean_library(sqlite_store, entry, root)  # the same declarations at a new pin
    assert res.counts["mentions unchanged, visibility read again"] == 1
    assert res.counts["mentions added"] == res.counts["mentions retired"] == 0
    tables = store_tables(sqlite_store)  # the bump's run records this rule
    assert not tables(FIELD) and tables("Real.cauchy")
