"""Lean's names for anonymous instances (`Lean.Elab.Command.NameGen`), on instances of Mathlib
at the pin whose generated names Mathlib itself refers to, and on the fixture projects."""

from pathlib import Path

import pytest

from math2.importers.instance_names import _resolve, library_classes, name_instances
from math2.importers.lean_namegen import instance_base_name
from math2.importers.lean_names import binder_groups, class_signatures, lean_name, module_suffix
from math2.importers.lean_source import lean_files, scan_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Classes as Mathlib declares them (name → Prop-valued, takes instance arguments), read by
# `class_signatures` from these headers.
HEADERS = """
class Nontrivial (α : Type*) : Prop where
class ContinuousSMul (M X : Type*) [SMul M X] [TopologicalSpace M] [TopologicalSpace X] : Prop where
class Module (R : Type u) (M : Type v) [Semiring R] [AddCommMonoid M]
    extends DistribMulAction R M where
class IsScalarTower (M N α : Type*) [SMul M N] [SMul N α] [SMul M α] : Prop where
structure ContinuousLinearMap {R S : Type*} [Semiring R] [Semiring S] (σ : R →+* S) where
class TopologicalSpace (X : Type u) where
class FaithfulSMul (M α : Type*) [SMul M α] : Prop where
class IsRightCancelMul (G : Type u) [Mul G] : Prop where
class IsLeftCancelMul (G : Type u) [Mul G] : Prop where
"""
CLASSES = class_signatures(HEADERS)


@pytest.mark.parametrize(
    ("statement", "namespace", "name"),
    [
        # Mathlib/Analysis/LocallyConvex/SeparatingDual.lean (named in that file's docstring):
        # `→L[R]` hides `RingHom.id R`; binders the later ones depend on give no `Of`
        (
            "(W) [AddCommGroup W] [TopologicalSpace W] [Module R W] [Nontrivial W] "
            "[ContinuousSMul R W] [Nontrivial V] : Nontrivial (V →L[R] W)",
            ["SeparatingDual"],
            "instNontrivialContinuousLinearMapIdOfContinuousSMul",
        ),
        # Mathlib/FieldTheory/IsAlgClosed/AlgebraicClosure.lean (the namespace is met already)
        (
            "{S : Type*} [DistribSMul S k] [IsScalarTower S k k] : SMul S (AlgebraicClosure k)",
            ["AlgebraicClosure"],
            "instSMulOfIsScalarTower",
        ),
        # Mathlib/Algebra/Group/Action/Faithful.lean
        ("[Mul α] [IsRightCancelMul α] : FaithfulSMul α α", [],
         "instFaithfulSMulOfIsRightCancelMul"),
        # Mathlib/Algebra/Group/Action/Faithful.lean: postfix `ᵐᵒᵖ` is `MulOpposite`
        ("(R : Type*) [Mul R] [IsLeftCancelMul R] : FaithfulSMul Rᵐᵒᵖ R", [],
         "instFaithfulSMulMulOppositeOfIsLeftCancelMul"),
        # Mathlib/Algebra/Group/Defs.lean: `instSMulOfMul`
        ("[Mul α] : SMul α α", [], "instSMulOfMul"),
        ("[t₁ : TopologicalSpace X] [t₂ : TopologicalSpace Y] : TopologicalSpace (X × Y)", [],
         "instTopologicalSpaceProd"),
        (": CommSemiring ℕ", ["Nat"], "instCommSemiring"),
        (": FunLike (M →* N) M N", ["MonoidHom"], "instFunLike"),
        (": Module R (Polynomial R)", [], "instModulePolynomial"),
        ("[Fintype α] : Fintype (Option α)", [], "instFintypeOption"),
        ("[Fact p.Prime] : Field (ZMod p)", [], "instFieldZModOfFactPrime"),
        (": Inhabited (E →ₗ[R] F)", [], "instInhabitedLinearMapId"),
        (": Coe («Quoted» α) Foo", [], "instCoeQuotedFoo"),
        # notation is never part of a name: `Σ` is Sigma, `⥤` a functor
        (": SMul M (Σ i, α i)", ["Sigma"], "instSMul"),
        (": Inhabited (Σ i, Foo i)", [], "instInhabitedSigmaFoo"),
        (": Category (C ⥤ D)", [], "instCategoryFunctor"),
    ],
)  # fmt: skip
def test_generated_names_equal_leans(statement: str, namespace: list[str], name: str) -> None:
    assert instance_base_name(statement, namespace, CLASSES) == name


def test_class_signatures_and_binders() -> None:
    assert CLASSES["Nontrivial"] == (True, False)
    assert CLASSES["ContinuousSMul"] == (True, True)
    assert CLASSES["Module"] == (False, True) and CLASSES["TopologicalSpace"] == (False, False)
    assert binder_groups("{α : Type*} [inst : Foo α] (x y : α) [Bar (f x)]") == [
        ("{", ["α"], "Type*"), ("[", ["inst"], "Foo α"), ("(", ["x", "y"], "α"),
        ("[", [], "Bar (f x)"),
    ]  # fmt: skip
    assert module_suffix("Mathlib.Algebra.Demo") == "_mathlib_algebra_demo"
    assert lean_name("«Foo».«bar baz»") == "Foo.«bar baz»"


def test_the_library_pass_adds_the_module_suffix_and_numbers_repeats(tmp_path: Path) -> None:
    root = FIXTURES / "leanscan"
    files = [scan_file(root, p) for p in lean_files(root)]
    before = {d.name for f in files for d in f.declarations if d.generated}
    assert {"Scan.instInhabitedNat", "Scan.instInhabitedNat_1"} <= before
    name_instances(files)
    after = {d.name: d for f in files for d in f.declarations if d.generated}
    # nothing in these names is the library's own: Lean appends the module
    assert after["Scan.instInhabitedNat_mathlib_scan_1"].line == 38
    assert "Scan.instInhabitedNat_mathlib_scan" in after
    assert "Scan.instCommRingAlgebraicClosure_mathlib_scan" in after
    # a constant the library declares (in any file) means no suffix
    lib = tmp_path / "Mathlib"
    lib.mkdir()
    (lib / "A.lean").write_text("structure Foo where\n  x : Nat\n")
    (lib / "B.lean").write_text(
        "instance : Inhabited Foo := ⟨⟨0⟩⟩\ninstance : Inhabited Nat := ⟨0⟩\n"
        "class Good (α : Type) : Prop where\n"
        "instance [Good α] : Inhabited (Option α) := ⟨none⟩\n"
    )
    (lib / "C.lean").write_text(
        "instance : Zero (sphere x r) := ⟨0⟩\ninstance : Inhabited (WithZero Nat) := ⟨0⟩\n"
    )
    files = [scan_file(tmp_path, p) for p in lean_files(tmp_path)]
    name_instances(files, more_names=["WithZero"])  # e.g. an `@[to_additive]` twin
    names = {d.name for f in files for d in f.declarations if d.generated}
    assert names == {
        "instInhabitedFoo", "instInhabitedNat_mathlib_b", "instInhabitedOptionOfGood",
        # `sphere` may be the library's constant (lower case, hidden): no suffix
        "instZero", "instInhabitedWithZeroNat",
    }  # fmt: skip
    assert library_classes(files) == {"Foo": (False, False), "Good": (True, False)}


def test_notation_is_spelled_as_its_constant(tmp_path: Path) -> None:
    """Lean names an instance from the elaborated type, where notation is gone: the library's
    prefix, closed and postfix notation (global, scoped where its namespace is open, the file's
    local notation) is spelled as the constant it stands for before naming (issue 33 §5)."""
    lib = tmp_path / "Mathlib"
    lib.mkdir()
    (lib / "Defs.lean").write_text(
        "structure Witt (p : Nat) (R : Type) where\n  x : R\n"
        "structure Opp (α : Type) where\n  y : α\n"
        '@[inherit_doc] notation:max α "ᵒᵖ" => Opp α\n'
        "structure Box (n : Nat) (S : Type) where\n  z : S\n"
        'namespace Geo\nscoped[Geo] notation "𝔹(" n "; " S ")" => Box n S\nend Geo\n'
    )
    (lib / "Witt.lean").write_text(
        'local notation "𝕎" => Witt p\n'
        "namespace Witt\ninstance : CommRing (𝕎 R) := sorry\nend Witt\n"
        "instance : Category Cᵒᵖ := sorry\n"
        "open Geo in\ninstance : Inhabited 𝔹(n; S) := sorry\n"
    )
    (lib / "Other.lean").write_text("instance : Nonempty (𝕎 R) := sorry\n")
    files = [scan_file(tmp_path, p) for p in lean_files(tmp_path)]
    name_instances(files)
    names = {d.name for f in files for d in f.declarations if d.generated}
    # `𝕎` is local to Witt.lean: Other.lean's instance keeps the letter as written (and, no
    # constant of its name being the library's, the module suffix)
    assert names == {
        "Witt.instCommRing", "instCategoryOpp", "instInhabitedBox",
        "instNonempty𝕎_mathlib_other",
    }  # fmt: skip


def test_a_constant_resolves_as_lean_resolves_it() -> None:
    """`C` written inside `A.B` is `A.B.C`, `A.C` or `C`, innermost first; `_root_.C` is `C`
    alone (`math2.lean.names.in_namespace`); an escaped spelling is the printed name."""
    names = {"Foo", "Geo.Foo", "A.Bar", "A.B.«x y»"}
    assert _resolve("Foo", ["Geo"], names) == "Geo.Foo"
    assert _resolve("_root_.Foo", ["Geo"], names) == "Foo"
    assert _resolve("Bar", ["A", "B"], names) == "A.Bar"
    assert _resolve("«x y»", ["A", "B"], names) == "A.B.«x y»"
    assert _resolve("Foo", [], names) == "Foo"
    assert _resolve("Baz", ["A", "B"], names) is None
