"""Issue 41 §2, §3: classes and names from the library's tables (written for math2: the fixture
library tests/fixtures/lean_library), through `check_code` at both levels and `math2 lean check`
— a model's block that changes meaning through a class or a name is refused before Lean, a
person's context is flagged with a true reason, the legitimate shapes pass with no flag, and the
verdict does not depend on the cache flag."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from math2.cli import app
from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.identity import LeanIdentity
from math2.lean.library import LibraryTables, store_tables
from tests.conftest import REPO
from tests.lean.conftest import fake_argv, requests
from tests.lean.library_fixture import FIXTURE, LIBRARY

BENCH = ContextTrust.BENCHMARK
H = "import Mathlib\n"

# The legitimate shapes of a model's block: accepted at both levels with no flag.
LEGIT: dict[str, str] = {
    "group and elements": H
    + "variable {G : Type*} [Group G] (g h : G)\ntheorem foo : g * h = g * h := by sorry",
    "comm ring and elements": H
    + "variable {R : Type*} [CommRing R] (x y : R)\ntheorem foo : x * y = y * x := by sorry",
    "function to ℝ": H
    + "variable {D : Type*} {f : D → ℝ}\ntheorem foo (x : D) : f x = f x := by sorry",
    "object of a type bound earlier": H
    + "variable {X : Type*} (x : X)\ntheorem foo : x = x := by sorry",
    "module over a bound ring": H + "variable {R M : Type*} [CommRing R] [Add M] [Module R M]\n"
    "theorem foo (m : M) : m = m := by sorry",
    "a variable named inst": H + "variable (inst : ℕ)\ntheorem foo : inst = inst := by sorry",
}

# A model's block that changes meaning through a class or a name: refused (generated level),
# flagged with the rule given here (benchmark level).
CHANGED: dict[str, tuple[str, str]] = {
    "class under ∃ outside any hand list": (
        H + "theorem foo : ∃ _ : IsTaggedClass ℕ, True := by sorry",
        "instance",
    ),
    "Membership under ∃": (
        H + "theorem foo : ∃ _ : Membership ℕ (Set ℕ), (1 : ℕ) ∈ ({2} : Set ℕ) := by sorry",
        "instance",
    ),
    "HasSubset under fun": (
        H + "theorem foo : (fun (_ : HasSubset (Set ℕ)) => (∅ : Set ℕ) ⊆ {1}) "
        "⟨fun _ _ => True⟩ := by sorry",
        "instance",
    ),
    "hijacking binder over a bound type": (
        H + "variable {β : Type} [Membership β (Set ℕ)]\n"
        "theorem foo (b : β) : b ∈ ({1} : Set ℕ) := by sorry",
        "instance",
    ),
    "hijacking and empty binders": (
        H + "variable {β : Type} [Membership β (Set ℕ)] [IsEmpty β]\n"
        "theorem foo : ∀ b : β, b ∈ ({1} : Set ℕ) := by sorry",
        "hypothesis",
    ),
    "contradictory binders": (
        H + "variable {α : Type} [Nontrivial α] [Subsingleton α]\n"
        "theorem foo (a b : α) : a = b := by sorry",
        "hypothesis",
    ),
    "a predicate variable": (
        H + "variable (p : ℕ) (hp : p.Prime)\ntheorem foo : p = p := by sorry",
        "hypothesis",
    ),
    "open of a namespace with scoped instances": (
        H + "open PiCountable\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "instance",
    ),
    "open … in of a namespace with scoped instances": (
        H + "open PiCountable in\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "instance",
    ),
    "namespace of a namespace with scoped instances": (  # entering it opens its scope
        H + "namespace PiCountable\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "instance",
    ),
    "namespace under one with scoped instances": (
        H + "namespace PiCountable.Sub\ntheorem foo : (3 : ℕ) < 2 := by sorry\nend PiCountable.Sub",
        "instance",
    ),
    "nested namespaces entering one with scoped instances": (  # A then B enters A.B
        H + "namespace Lexicographic\nnamespace Pairs\ntheorem foo : (3 : ℕ) ≤ 2 := by sorry\n"
        "end Pairs\nend Lexicographic",
        "instance",
    ),
    "open inside the enclosing namespace": (  # `open Pairs` inside Lexicographic opens A.B
        H + "namespace Lexicographic\nopen Pairs\ntheorem foo : (3 : ℕ) ≤ 2 := by sorry",
        "instance",
    ),
    "look-alike variable under open": (
        H + "open Real\nvariable (lοg : ℕ → ℕ)\ntheorem foo : lοg 1 = 0 := by sorry",
        "look-alike",
    ),
    "look-alike binder under open": (
        H + "open Real\ntheorem foo (lοg : ℕ → ℕ) : lοg 1 = 0 := by sorry",
        "look-alike",
    ),
}

# A person's context: accepted and flagged (rule, what the reason says, what it never says).
FLAGGED: dict[str, tuple[str, str, str, str]] = {
    "open renaming": (
        H + "open Nat renaming succ → pred\ntheorem foo (n : ℕ) : n.pred = n + 1 := by sorry",
        "open",
        "renaming",
        "",
    ),
    "open hiding … in": (
        H + "open Real hiding sqrt in\ntheorem foo : Real.sqrt 4 = 2 := by sorry",
        "open",
        "hiding",
        "",
    ),
    "notation with attributes": (
        H + 'local notation (name := myPi) (priority := high) "π" => (3 : ℝ)\n'
        "theorem foo : π = 3 := by sorry",
        "notation",
        "π",
        "",
    ),
    "definition shadowing under an opened namespace": (
        H + "namespace Foo\ndef Nat.sqrt (n : ℕ) : ℕ := 0\nend Foo\nopen Foo\n"
        "theorem foo : Nat.sqrt 4 = 0 := by sorry",
        "shadowing",
        "Nat.sqrt",
        "",
    ),
    "def sqrt under open Real": (
        H + "open Real\ndef sqrt (x : ℝ) : ℝ := x\ntheorem foo : sqrt 4 = 4 := by sorry",
        "shadowing",
        "Real.sqrt",
        "",
    ),
    "instance on a core type names class and type": (
        H + "instance : LT ℕ := ⟨fun _ _ => True⟩\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "core instance",
        "an instance of `LT` on `ℕ`",
        "for the target",
    ),
    "instance on a library type names class, parents and type": (
        H + "instance : LinearOrder (Polynomial ℚ) := ⟨⟩\n"
        "theorem foo (p q : Polynomial ℚ) : p ≤ q := by sorry",
        "instance",
        "an instance of `LinearOrder` (which extends PartialOrder, Preorder, LE, LT) on "
        "`(Polynomial ℚ)`",
        "for the target",
    ),
}


@pytest.mark.parametrize("case", sorted(LEGIT))
@pytest.mark.parametrize("trust", list(ContextTrust))
def test_legitimate_blocks_pass_with_no_flag(case: str, trust: ContextTrust) -> None:
    report = check_code(LEGIT[case], name="foo", trust=trust, known_name=LIBRARY)
    assert report.ok and report.flags == [], (case, report.reason, report.flags)


@pytest.mark.parametrize("case", sorted(CHANGED))
def test_a_models_block_changing_meaning_through_the_library_is_refused(case: str) -> None:
    code, _ = CHANGED[case]
    report = check_code(code, name="foo", known_name=LIBRARY)
    assert not report.ok, case
    assert {v.rule for v in report.violations} == {"generated"}, report.violations
    assert all(v.line is not None and v.line >= 2 for v in report.violations)


@pytest.mark.parametrize("case", sorted(CHANGED))
def test_a_persons_context_changing_meaning_through_the_library_is_flagged(case: str) -> None:
    code, rule = CHANGED[case]
    report = check_code(code, name="foo", trust=BENCH, known_name=LIBRARY)
    assert report.ok, (case, report.reason)
    rules = {f.rule.removeprefix("core ") for f in report.flags}  # on a core type: `core …`
    assert rule in rules, (case, report.flags)


@pytest.mark.parametrize("case", sorted(FLAGGED))
def test_a_persons_context_is_flagged_with_a_true_reason(case: str) -> None:
    code, rule, says, never = FLAGGED[case]
    report = check_code(code, name="foo", trust=BENCH, known_name=LIBRARY)
    assert report.ok, (case, report.reason)
    found = [f for f in report.flags if f.rule == rule]
    assert found and any(says in f.detail for f in found), (case, report.flags)
    assert not never or all(never not in f.detail for f in report.flags), report.flags


def test_a_class_is_read_from_the_table_not_from_its_spelling() -> None:
    # a capitalised structure is an object, not an instance; a class the table holds is one
    obj = H + "theorem foo : ∃ p : Polynomial ℚ, p = p := by sorry"
    assert check_code(obj, name="foo", known_name=LIBRARY).ok
    tables = LibraryTables(classes={k: v for k, v in LIBRARY.classes.items() if k != "LT"})
    chosen = H + "theorem foo : ∃ _ : LT ℕ, (3 : ℕ) < 2 := by sorry"
    assert not check_code(chosen, name="foo", known_name=LIBRARY).ok
    assert check_code(chosen, name="foo", known_name=tables).ok  # LT not a class in this table


def test_the_tables_read_classes_parents_out_params_and_scoped_instances() -> None:
    assert LIBRARY.classes["Nontrivial"].prop and not LIBRARY.classes["Group"].prop
    assert LIBRARY.classes["Membership"].out_params == (True, False)
    assert LIBRARY.ancestors(LIBRARY.classes["Group"]) == ["Monoid", "Semigroup", "Mul"]
    assert "IsTaggedClass" in LIBRARY.classes  # a structure tagged @[class]
    assert "Polynomial" not in LIBRARY.classes and LIBRARY("Polynomial")
    assert LIBRARY.scoped == frozenset({"PiCountable", "Lexicographic.Pairs"})
    assert LIBRARY.predicate("p.Prime") and LIBRARY.predicate("Even")
    assert not LIBRARY.predicate("Real.sqrt")
    # Lean core's names join the table (`Nat.sqrt`, `Membership`, `HasSubset`)
    assert all(LIBRARY(n) for n in ("Nat.sqrt", "Nat.lt_irrefl", "Membership", "HasSubset"))


def _store_with_fixture(tmp_path: Path, url: str | None = None, fixture: Path = FIXTURE):
    """A store (SQLite unless `url`) with the fixture's (`fixture`'s) Mathlib part imported by
    the Mathlib importer."""
    from math2.importers.mathlib import import_lean_library
    from math2.sources import load_manifest, sync_manifest
    from math2.store import Store

    store = Store(url or f"sqlite:///{tmp_path / 'c.db'}")
    store.upgrade()
    manifest_path = tmp_path / "sources.yaml"
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    manifest_path.write_text(yaml.safe_dump(data, sort_keys=False))
    manifest = load_manifest(manifest_path)
    with store.session() as s:
        sync_manifest(s, manifest)
    root = tmp_path / "library"  # a copy outside math2's git checkout (no commit to check)
    shutil.copytree(fixture, root)
    import_lean_library(store, manifest.get("mathlib"), root)
    return store


def test_the_stores_tables_and_their_part_in_the_identity(tmp_path: Path) -> None:
    from math2.store import Store

    empty = Store(f"sqlite:///{tmp_path / 'e.db'}")
    empty.upgrade()
    before = store_tables(empty)
    store = _store_with_fixture(tmp_path)
    tables = store_tables(store)
    assert tables.classes["Nontrivial"].prop and "IsTaggedClass" in tables.classes
    # from the mentions' modifiers
    assert tables.scoped == frozenset({"PiCountable", "Lexicographic.Pairs"})
    assert tables("Real.sqrt") and not tables("Real.nosuch")
    assert tables.digest != before.digest
    ident = LeanIdentity(kind="fake-repl", lean_version="fake-repl x")
    keys = {ident.with_tables(t).cache_part() for t in (tables, before, None)}
    assert len(keys) == 3  # a verdict cached under one table is not reused under another
    store.close()
    empty.close()


def test_batteries_joins_the_tables(tmp_path: Path) -> None:
    from math2.importers.batteries import import_batteries
    from math2.sources import load_manifest

    store = _store_with_fixture(tmp_path)
    root = tmp_path / "batteries"
    (root / "Batteries").mkdir(parents=True)
    (root / "Batteries" / "Fixture.lean").write_text(
        "/-! Shaped as a Batteries file, written for math2's tests. -/\n"
        "class Batteries.FixtureClass (α : Type) : Prop where\n  out : True\n\n"
        "def List.fixtureChain (l : List Nat) : Prop := True\n"
    )
    (root / "test").mkdir()
    (root / "test" / "Check.lean").write_text("def notALibraryName : Nat := 0\n")
    import_batteries(store, load_manifest(tmp_path / "sources.yaml").get("batteries"), root)
    tables = store_tables(store)
    assert tables.classes["Batteries.FixtureClass"].prop and tables("List.fixtureChain")
    assert tables("Real.sqrt")  # Mathlib's names stay
    assert not tables("notALibraryName")  # only the Batteries/ folder is the library
    store.close()


def test_no_cache_gives_the_same_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store_with_fixture(tmp_path)
    store.close()
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_LEAN__PROJECT_DIR", str(tmp_path))
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("MATH2_LEAN__REPL_COMMAND", json.dumps(fake_argv("--log", str(log))))
    # a variable named like the library's `Real.sqrt`, reached through `open Real`
    code = H + "variable (sqrt : ℝ → ℝ)\nopen Real\ntheorem foo : sqrt 4 = 2 := by sorry"
    f = tmp_path / "Shadow.lean"
    f.write_text(code)
    outputs = []
    for flag in ("--cache", "--no-cache"):
        res = CliRunner().invoke(app, ["lean", "check", flag, "--name", "foo", str(f)])
        assert res.exit_code == 1 and "shadows the constant `sqrt`" in res.output, res.output
        outputs.append(res.output.splitlines()[0])
    assert outputs[0] == outputs[1]
    assert requests(log) == []


@pytest.mark.parametrize("context", ["generated", "benchmark"])
def test_cli_at_both_levels(env: Path, context: str) -> None:
    rows = [{"id": _id(k), "theorem_name": "foo", "code": c} for k, c in LEGIT.items()]
    rows += [{"id": _id(k), "theorem_name": "foo", "code": c} for k, (c, _) in CHANGED.items()]
    f = env / "items.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["lean", "check", "--no-cache", "--context", context, str(f)])
    verdicts = {
        ln.split()[1]: ln.split()[0] for ln in res.output.splitlines() if ln[:4] in ("pass", "FAIL")
    }
    for k in LEGIT:
        assert verdicts[_id(k)] == "pass", (k, res.output)
    for k in CHANGED:
        assert verdicts[_id(k)] == ("FAIL" if context == "generated" else "pass"), (k, res.output)
    sent = "\n".join(requests(env / "requests.jsonl"))
    if context == "generated":  # nothing refused reached Lean
        assert all(CHANGED[k][0].split("\n", 1)[1][:30] not in sent for k in CHANGED)


def _id(case: str) -> str:
    return case.replace(" ", "_")
