"""Issue 41 §2 (review): core types and notation tokens from the library's tables, never from a
hand list — Lean core's types and the types of the library's closed notations (`ℝ` → `Real`),
read the same from sources and from the store (`notations` rows keep every atom since
migration 0016); without tables each reader fails closed."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import update

from math2.lean.core_types import UNKNOWN, core_types_of
from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.library import LibraryTables, store_tables
from math2.services.lean import source_tables
from math2.store import Store
from tests.lean.library_fixture import CORE, FIXTURE, LIBRARY
from tests.lean.test_library_tables import _store_with_fixture

BENCH = ContextTrust.BENCHMARK
H = "import Mathlib\n"


def _flags(code: str, tables: LibraryTables | None) -> list[tuple[str, str]]:
    r = check_code(code, name="foo", trust=BENCH, known_name=tables)
    assert r.ok, [v.detail for v in r.violations]
    return [(f.rule, f.detail) for f in r.flags]


def test_core_types_are_lean_cores_types_and_the_closed_notations() -> None:
    assert {"Nat", "Bool", "Fin", "List"} <= CORE.core_types  # Init's inductives, structures
    assert {"Real", "ℝ", "NNReal", "ℝ≥0", "ℕ"} <= LIBRARY.core_types  # `notation "ℝ" => Real`
    # Polynomial takes an argument and `R[X]` has an operand; π is a term; Set takes an
    # argument; Cardinal is the library's without a closed notation; classes are not types
    for not_core in ("Polynomial", "[X]", "π", "Real.pi", "Set", "Finset", "Cardinal", "LT"):
        assert not_core not in LIBRARY.core_types, not_core
    assert core_types_of(None) is None and core_types_of(LibraryTables()) is None


def test_the_core_instance_wording_follows_the_table() -> None:
    on_real = H + "instance : LT ℝ := ⟨fun _ _ => True⟩\ntheorem foo : (1 : ℝ) < 2 := by sorry"
    on_card = on_real.replace("ℝ", "Cardinal")
    got = _flags(on_real, LIBRARY)
    assert [r for r, _ in got] == ["core instance"] and "on ℝ" in got[0][1], got
    got = _flags(on_card, LIBRARY)
    assert [r for r, _ in got] == ["instance"] and "library's Cardinal" in got[0][1], got
    # without tables: the closed instance is flagged as one on a core type, saying why
    got = _flags(on_card, None)
    assert [r for r, _ in got] == ["core instance"] and UNKNOWN in got[0][1], got


def test_a_definition_named_like_a_core_type_the_store_does_not_declare(tmp_path: Path) -> None:
    """The store holds Mathlib only: `Nat` is a core type through `notation "ℕ" => Nat`."""
    tables = store_tables(_store_with_fixture(tmp_path))
    assert not tables("Nat") and "Nat" in tables.core_types
    code = H + "namespace Foo\ndef Nat : Type := Unit\nend Foo\ntheorem foo : 1 = 1 := by sorry"
    got = _flags(code, tables)
    assert ("shadowing", "`Foo.Nat` is named like the core type Nat") in got, got
    assert not [d for r, d in _flags(code.replace("Nat", "Pebble"), tables) if r == "shadowing"]
    plain = H + "def Pebble : Type := Unit\ntheorem foo : 1 = 1 := by sorry"
    assert _flags(plain, tables) == []
    got = _flags(plain, None)  # no tables: not checked, and said so
    why = f"`Pebble` may be named like a core type ({UNKNOWN}: flagged, fail closed)"
    assert got == [("unchecked", why)], got


def test_the_store_and_the_sources_give_the_same_tokens_and_core_types(tmp_path: Path) -> None:
    from math2.store.models import NotationRecord

    store = _store_with_fixture(tmp_path)  # the fixture's Mathlib part, imported
    sources = source_tables(FIXTURE, ("Mathlib",))
    tables = store_tables(store)
    assert tables.tokens == sources.tokens and tables.tokens_complete
    # every atom, not only each command's main symbol, and commands with no symbol too
    assert {"[X]", "ℝ≥0", "π", "∑", "over", "sumOf"} <= tables.tokens
    assert tables.core_types == sources.core_types
    pi = H + 'local notation "π" => (3 : ℝ)\ntheorem foo : π = 3 := by sorry'
    new = H + 'local notation "twice" x => 2 * x\ntheorem foo : twice 3 = 6 := by sorry'
    for t in (tables, sources):
        assert any("redefines `π`" in d for r, d in _flags(pi, t) if r == "notation")
        assert not [d for r, d in _flags(new, t) if r == "notation"]
    # rows stored before atoms were kept: the token table is not complete, readers fail closed
    with store.session() as s:
        s.execute(update(NotationRecord).values(atoms=None))
        s.commit()
    old = store_tables(store)
    assert not old.tokens_complete and old.token("twice") is None
    assert core_types_of(old) is None  # `ℝ` → `Real` cannot be read: fail closed
    assert [r for r, _ in _flags(new, old)] == ["notation"]
    assert old.digest != tables.digest
    store.close()


def test_without_tables_a_name_of_mixed_scripts_is_a_look_alike() -> None:
    """No table says `Nat` or `log` is a name: a name mixing Latin letters with look-alikes of
    another script is refused for a model and flagged for a person all the same (fail closed);
    a name all in one other script (`αβ`) is not one."""
    nu = H + "theorem foo (Νat : Type) (n : Νat) : n = n := by sorry"  # a Greek capital Nu
    omicron = H + "variable (lοg : ℕ → ℕ)\ntheorem foo : lοg 1 = 0 := by sorry"
    for code, reads in ((nu, "Nat"), (omicron, "log")):
        r = check_code(code, name="foo", known_name=None)
        assert not r.ok and f"looks like `{reads}`" in r.violations[0].detail, r.violations
        got = _flags(code, None)
        assert [x for x, _ in got] == ["look-alike"] and f"reads as `{reads}`" in got[0][1], got
    greek = H + "theorem foo (αβ : ℕ) : αβ = αβ := by sorry"
    assert check_code(greek, name="foo", known_name=None).ok and _flags(greek, None) == []


SHADOWING_VARIABLES = {
    "Real": H + "variable (Real : Type) [Subsingleton Real]\n"
    "theorem foo (x y : Real) : x = y := by sorry",
    "ℕ": H + "variable (ℕ : Type) [LT ℕ]\ntheorem foo (x y : ℕ) : x < y := by sorry",
}


def test_without_tables_a_variable_named_like_a_constant_fails_closed() -> None:
    """No library in the store and no toolchain (`library_tables()` gives an empty table): a
    variable the statement uses that may be a library constant is refused from a model and
    flagged `unchecked` from a person, saying why; the fixture's tables say `shadowing`."""
    for name, code in SHADOWING_VARIABLES.items():
        for tables in (LibraryTables(), None):
            r = check_code(code, name="foo", trust=ContextTrust.GENERATED, known_name=tables)
            assert not r.ok, (name, tables)
            assert any(
                f"the variable `{name}` may shadow a constant" in v.detail
                and "the library tables are not loaded" in v.detail
                for v in r.violations
            ), [v.detail for v in r.violations]
            got = _flags(code, tables)
            assert any(
                r == "unchecked" and f"the variable `{name}` may shadow" in d and "not loaded" in d
                for r, d in got
            ), got
        r = check_code(code, name="foo", trust=ContextTrust.GENERATED, known_name=LIBRARY)
        assert not r.ok and any("shadows the constant" in v.detail for v in r.violations)
        assert "shadowing" in [r for r, _ in _flags(code, LIBRARY)]


def test_without_tables_a_models_usual_variables_pass_unflagged() -> None:
    for block, statement in (
        ("variable {G : Type*} [Group G] (g h : G)", "g * h = h * g"),
        ("variable {D : Type*} {f : D → ℝ} (x₁ α : D)", "f x₁ = f α"),
        ("variable {R : Type*} [CommRing R] (x y x' : R)", "x * y = y * x'"),
    ):
        code = f"{H}{block}\ntheorem foo : {statement} := by sorry"
        for tables in (LibraryTables(), None):
            r = check_code(code, name="foo", trust=ContextTrust.GENERATED, known_name=tables)
            assert r.ok and not r.flags, (block, [v.detail for v in r.violations], r.flags)
            assert _flags(code, tables) == [], block


NESTED = """namespace Outer.Mid
structure Box (α : Type) where
  val : α
/-- `Box` here is `Outer.Mid.Box`, which takes an argument: no core type. -/
notation "𝔹" => Box
/-- `Plain` is `Outer.Plain`, one namespace out. -/
notation "ℙ" => Plain
/-- `_root_.Box` is the root's `Box`, whatever the namespace declares. -/
notation "𝕆" => _root_.Box
end Outer.Mid
"""


def test_a_closed_notation_names_the_constant_of_the_innermost_namespace(tmp_path: Path) -> None:
    """`x` written inside `A.B` is `A.B.x`, else `A.x`, else `x` (`names.in_namespace`): the
    sources and the store (which looks up every such name) resolve it alike."""
    import shutil

    root = tmp_path / "library"
    shutil.copytree(FIXTURE, root)
    (root / "Mathlib" / "Nested.lean").write_text(
        "def Box : Type := Unit\nnamespace Outer\ndef Plain : Type := Unit\nend Outer\n" + NESTED
    )
    sources = source_tables(root, ("Mathlib",))
    store = _store_of(tmp_path, root)
    tables = store_tables(store)
    store.close()
    for t in (sources, tables):
        assert t.core_types is not None and "𝔹" not in t.core_types
        assert {"ℙ", "Outer.Plain", "𝕆", "Box"} <= t.core_types
        assert "Plain" not in t.core_types and "Outer.Mid.Box" not in t.core_types
    assert tables.core_types == sources.core_types


def _store_of(tmp_path: Path, root: Path) -> Store:
    """A store with `root` imported as Mathlib (as `test_library_tables._store_with_fixture`)."""
    from math2.importers.mathlib import import_lean_library
    from math2.sources import load_manifest, sync_manifest
    from tests.conftest import REPO

    store = Store(f"sqlite:///{tmp_path / 'n.db'}")
    store.upgrade()
    manifest_path = tmp_path / "sources.yaml"
    manifest_path.write_text((REPO / "manifests" / "sources.yaml").read_text())
    manifest = load_manifest(manifest_path)
    with store.session() as s:
        sync_manifest(s, manifest)
    entry = manifest.get("mathlib")
    assert entry is not None
    import_lean_library(store, entry, root)
    return store
