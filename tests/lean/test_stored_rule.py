"""A store's library tables are read only under the rule its Lean libraries were imported under
(`math2.lean.stored_rule`): a store imported by an older math2 (its private structure's fields
stored as visible names) is refused by every path that gives a verdict with the tables, with
the way out named; importing it again reads it under this rule; a bump rereads an unchanged
declaration's visibility; Lean's own flag (lean_scout) is read as it is."""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import delete, func, select

from math2.config import load_settings
from math2.importers.common import replacing
from math2.importers.mathlib import import_lean_library
from math2.lean.library import TABLES_RULE, store_tables
from math2.lean.stored_rule import StaleImport, StaleTables
from math2.services import make_checker
from math2.services.lean import library_tables
from math2.sources import load_manifest
from math2.store import Binding, Mention, Node, NotationRecord, Run
from math2.store.work import RunStatus
from tests.importers.scout_data import scout
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
        assert "run `math2 import mathlib`" in msg and "tables-3" in msg
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


@pytest.mark.parametrize("flag", [True, False, None])
def test_lean_scouts_own_flag_is_read_as_it_is(tmp_path: Path, flag: bool | None) -> None:
    """Lean's allowCompletion is exact under every rule; data without it (the older
    mathlib-types schema, or a run that did not record it) keeps private names visible."""
    store = _store_with_fixture(tmp_path)
    try:
        recorded = {} if flag is None else {"lean_flag": flag}
        # recorded under an older rule: Lean's flag does not depend on it
        _as_imported_before(store, {"route": "lean_scout", "tables_rule": "tables-2", **recorded})
        if flag:
            assert store_tables(store)("Real.cauchy")
        else:
            with pytest.raises(StaleTables, match="without allowCompletion"):
                store_tables(store)
    finally:
        store.close()


@pytest.mark.parametrize("old_schema", [False, True])
def test_a_lean_scout_import_records_whether_it_had_lean_s_flag(
    sqlite_store, tmp_path: Path, old_schema: bool
) -> None:
    entry = sync(sqlite_store, manifest_with_pins(tmp_path, "aaa"))
    import_lean_library(sqlite_store, entry, scout(tmp_path / "scout", old_schema=old_schema))
    if old_schema:  # every constant kept, private ones visible: no verdict with these rows
        with pytest.raises(StaleTables, match="without allowCompletion"):
            store_tables(sqlite_store)
    else:
        assert store_tables(sqlite_store)("Nat.add_comm")


@pytest.mark.parametrize("at_new_pin", ["nothing", RunStatus.FAILED, RunStatus.RUNNING])
def test_a_new_pin_not_imported_yet_keeps_the_refusal(
    sqlite_store, tmp_path: Path, at_new_pin: str
) -> None:
    """The rows store_tables reads are the older pin's until a library import at the new pin
    finishes: a synced pin with no finished import changes nothing (review 1, H1)."""
    root = tmp_path / "library"
    shutil.copytree(FIXTURE, root)
    import_lean_library(sqlite_store, sync(sqlite_store, manifest_with_pins(tmp_path, "aaa")), root)
    _as_imported_before(sqlite_store, {})
    with pytest.raises(StaleTables):
        store_tables(sqlite_store)
    sync(sqlite_store, manifest_with_pins(tmp_path, "aaa", "bbb"))
    if at_new_pin != "nothing":  # `importers.runs.import_run`'s row: failed, running or killed
        with sqlite_store.session() as s:
            s.add(Run(job="import", key="mathlib@bbb", status=at_new_pin, params={"path": "x"}))
    with pytest.raises(StaleTables) as err:
        store_tables(sqlite_store)
    assert "mathlib@aaa" in str(err.value)


def test_a_library_with_no_import_recorded_is_refused(tmp_path: Path) -> None:
    store = _store_with_fixture(tmp_path)
    try:
        with store.session() as s:
            s.execute(delete(Run).where(Run.job == "import"))
        with pytest.raises(StaleTables, match="no finished import records the rule"):
            store_tables(store)
    finally:
        store.close()


def test_every_stale_library_is_named_with_its_command() -> None:
    err = StaleTables(
        [StaleImport("mathlib", "aaa", None), StaleImport("batteries", "bbb", "tables-2")],
        TABLES_RULE,
    )
    msg = str(err)
    assert msg.startswith("re-import mathlib batteries: ")
    assert "`math2 import mathlib`" in msg and "`math2 import batteries`" in msg


@pytest.mark.parametrize("force", [False, True])
def test_the_way_out_works_where_a_person_bound_a_mention(tmp_path: Path, force: bool) -> None:
    """The way out the refusal names, where clearing the pin is refused (a person's binding
    points at one of its mentions): the import reads the pin's rows again in place, the
    binding kept (review 1, M1)."""
    store = _store_with_fixture(tmp_path)
    try:
        with store.session() as s:
            run = s.scalar(select(Run).where(Run.job == "import", Run.key.like("mathlib@%")))
            tree = run.params["digest"].split("; read by ")[0]
            notations = s.scalar(select(func.count()).select_from(NotationRecord))
            node = Node(key="wd:Q1", title="x")
            s.add(node)
            s.flush()
            bound = s.scalar(select(Mention).where(Mention.name == "Real.cauchy"))
            s.add(Binding(node_id=node.id, mention_id=bound.id, status="confirmed"))
            bound_id = bound.id
        # a checkout read by lean_source 2, or (force) one read by this reader
        digest = f"{tree}; read by lean_source 2" if not force else run.params["digest"]
        _as_imported_before(store, {"digest": digest})
        with pytest.raises(StaleTables) as err:
            store_tables(store)
        assert "`math2 import mathlib`" in str(err.value)
        manifest = load_manifest(tmp_path / "sources.yaml")
        with replacing() if force else nullcontext():
            res = import_lean_library(store, manifest.get("mathlib"), tmp_path / "library")
        assert res.counts["mentions unchanged, visibility read again"] == 1
        assert res.counts["mentions added"] == res.counts["mentions retired"] == 0
        tables = store_tables(store)
        assert not tables(FIELD) and tables("Real.cauchy")
        with store.session() as s:
            assert s.scalar(select(Binding.mention_id)) == bound_id
            assert s.scalar(select(func.count()).select_from(Run).where(Run.job == "bump")) == 0
            assert s.scalar(select(func.count()).select_from(NotationRecord)) == notations
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
