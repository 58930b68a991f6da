"""Issue 41 §2 (review): where the library's tables cannot say what a name is, hygiene fails
closed — a model's `variable (inst : LT ℕ)` is an instance in Lean whether or not math2's class
table holds `LT`, so without the table it is refused with the reason, never passed."""

from __future__ import annotations

from pathlib import Path

from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker
from math2.lean.hygiene import check_code
from math2.lean.library import LibraryTables
from math2.lean.pool import PoolConfig
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
