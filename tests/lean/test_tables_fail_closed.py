"""Issue 41 §2 (review): where the library's tables cannot say what a name is, hygiene fails
closed — a model's `variable (inst : LT ℕ)` is an instance in Lean whether or not math2's class
table holds `LT`, so without the table it is refused with the reason, never passed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker
from math2.lean.hygiene import check_code
from math2.lean.library import LibraryTables, store_tables
from math2.lean.pool import PoolConfig
from math2.lean.trust import ContextTrust
from tests.lean.conftest import fake_argv, requests
from tests.lean.library_fixture import LIBRARY

H = "import Mathlib\n"
INST = H + "variable (inst : LT ℕ)\ntheorem foo : (3 : ℕ) < 2 := by sorry"
FINSET = H + "variable (s : Finset ℕ)\ntheorem foo : s = s := by sorry"
# the legitimate shapes need no table: unapplied types, arguments bound by the block, functions
NO_TABLE_NEEDED = [
    H + "variable {α : Type*} (s : Finset α)\ntheorem foo : s = s := by sorry",
    H + "variable (x : ℝ) (f : ℕ → ℝ)\ntheorem foo : f 0 = x := by sorry",
    H + "variable {G : Type*} [Group G] (g h : G)\ntheorem foo : g * h = h * g := by sorry",
    H + "variable {n : ℕ} (v : Fin n)\ntheorem foo : v = v := by sorry",
]


def test_an_explicit_class_variable_is_refused_without_the_class_table() -> None:
    for tables in (None, LibraryTables()):
        r = check_code(INST, name="foo", known_name=tables)
        assert not r.ok and [v.rule for v in r.violations] == ["generated"]
        why = r.violations[0].detail
        assert "`variable (inst : LT ℕ)`" in why and "cannot tell whether `LT` is a class" in why
        assert "not loaded" in why and "fail closed" in why
        for spelled in ("((LT ℕ))", "@LT ℕ"):  # brackets or `@` around it change nothing
            code = INST.replace("LT ℕ)", spelled + ")")
            r = check_code(code, name="foo", known_name=tables)
            assert not r.ok and "`LT` is a class" in r.violations[0].detail, code
    # with the table, the class rule itself refuses it (LT is a class over no variable)
    r = check_code(INST, name="foo", known_name=LIBRARY)
    assert not r.ok and "an instance of `LT` on ℕ" in r.violations[0].detail


def test_a_type_the_table_knows_passes_and_one_it_lacks_is_refused() -> None:
    assert check_code(FINSET, name="foo", known_name=LIBRARY).ok  # Finset: a structure
    r = check_code(FINSET, name="foo", known_name=None)
    assert not r.ok and "cannot tell whether `Finset` is a class" in r.violations[0].detail
    lacking = H + "variable (m : Matrix (Fin 2) (Fin 2) ℕ)\ntheorem foo : m = m := by sorry"
    r = check_code(lacking, name="foo", known_name=LIBRARY)
    assert not r.ok and "tables do not hold it" in r.violations[0].detail


def test_the_legitimate_shapes_need_no_table() -> None:
    for code in NO_TABLE_NEEDED:
        for tables in (None, LIBRARY):
            r = check_code(code, name="foo", known_name=tables)
            assert r.ok, (code, [v.detail for v in r.violations])


async def test_without_tables_nothing_reaches_the_double(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
    try:
        checker = LeanChecker(backend, timeout_s=20)  # no tables: known_name None
        r = await checker.check(CheckItem(id="i", code=INST, name="foo"))
        assert not r.passed and "cannot tell whether `LT` is a class" in r.reason
        ok = await checker.check(CheckItem(id="j", code=NO_TABLE_NEEDED[0], name="foo"))
        assert ok.passed, ok.reason
    finally:
        await backend.close()
    assert [s for s in requests(log) if "inst : LT" in s] == []


BENCH = ContextTrust.BENCHMARK


def _flags(code: str, tables: LibraryTables | None, rule: str) -> list[str]:
    r = check_code(code, name="foo", trust=BENCH, known_name=tables)
    assert r.ok, [v.detail for v in r.violations]
    return [f.detail for f in r.flags if f.rule == rule]


def test_notation_tokens_come_from_the_librarys_notation_commands() -> None:
    """No hand list of tokens: `π` is flagged because the library declares `notation "π"`, a new
    token is not; where the tables hold no notation (the store keeps none, or no tables),
    every token the statement uses is flagged, saying why (fail closed)."""
    pi = H + 'local notation "π" => (3 : ℝ)\ntheorem foo : π = 3 := by sorry'
    new = H + 'local notation "twice" x => 2 * x\ntheorem foo : twice 3 = 6 := by sorry'
    assert any("redefines `π`" in f for f in _flags(pi, LIBRARY, "notation"))
    assert _flags(new, LIBRARY, "notation") == []
    from_store = replace(LIBRARY, tokens=frozenset(), tokens_complete=False)
    for tables in (None, from_store):
        for code, atom in ((pi, "π"), (new, "twice")):
            got = _flags(code, tables, "notation")
            assert len(got) == 1 and f'"{atom}"' in got[0] and "not loaded" in got[0], got
    assert from_store.token("π") is None and LIBRARY.token("twice") is False


def test_library_namespaces_come_from_the_librarys_names() -> None:
    """No hand list of namespaces: `Real` is one because the library declares `Real.sqrt`;
    without tables a declaration inside a namespace the item does not declare is flagged."""
    real = H + "def Real.twice (x : ℕ) : ℕ := 2 * x\ntheorem foo : Real.twice 1 = 2 := by sorry"
    mine = H + "def Mine.twice (x : ℕ) : ℕ := 2 * x\ntheorem foo : Mine.twice 1 = 2 := by sorry"
    own = H + (
        "structure Pt where\n  x : ℕ\ndef Pt.twice (p : Pt) : ℕ := 2 * p.x\n"
        "theorem foo (p : Pt) : p.twice = 2 * p.x := by sorry"
    )
    assert any("the library namespace Real" in f for f in _flags(real, LIBRARY, "shadowing"))
    assert _flags(mine, LIBRARY, "shadowing") == []
    got = _flags(mine, None, "shadowing")
    assert len(got) == 1 and "cannot check" in got[0] and "Mine" in got[0], got
    assert _flags(own, None, "shadowing") == []  # the item's own type's API


def test_the_stores_namespaces_are_one_range_lookup(tmp_path: Path) -> None:
    from tests.lean.test_library_tables import _store_with_fixture

    tables = store_tables(_store_with_fixture(tmp_path))
    assert tables.namespace("Real") and tables.namespace("PiCountable")
    assert not tables.namespace("Rea") and not tables.namespace("Real.sqrt")
    assert not tables.namespace("Nosuch")
    # the store keeps every atom of the notation commands (tests/lean/test_core_types.py:
    # rows without them leave the table incomplete, and its readers fail closed)
    assert tables.tokens_complete is True
