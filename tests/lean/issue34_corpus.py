"""Items for issue 34, written for math2: what changes a statement's meaning without running
code, the names Lean prints, multi-part and instance items.

- GENERATED_REFUSED: a model's block (the generated level) that must be refused, by rule
  `generated` or `size`, each at a line and column; the target is `foo`.
- BENCHMARK_FLAGGED: a person's context that must be accepted at the benchmark level with the
  flag named here (the known-name table below stands for the store's Mathlib names).
- TRUE_REASONS: flags whose reason must say what the item does (and not another thing).
- NAMED: theorems named as Lean prints them (a prime, «…» with a space, a dot inside «…»,
  Greek and Cyrillic letters): accepted at both levels, and the compiled check must find them.
- MULTI_PART, INSTANCE_ITEM: a multi-part item whose parts all end in `sorry`, an item whose
  target is an instance.
"""

from __future__ import annotations

H = "import Mathlib\n"

# The library's name table in these tests (the CLI fills it from the store's Mathlib names).
KNOWN_NAMES = frozenset({"Real.sqrt", "Real.pi", "Nat.factorial", "Polynomial", "Finset.sum"})

GENERATED_REFUSED: dict[str, str] = {
    "false instance variable": H + "variable [Fintype ℕ]\ntheorem foo : False := by sorry",
    "instance variable on a closed family": H
    + "variable {n : ℕ} [LT (Fin n)]\ntheorem foo (a : Fin n) : a < a := by sorry",
    "explicit class variable on ℕ": H
    + "variable (inst : LT ℕ)\ntheorem foo : (3 : ℕ) < 2 := by sorry",
    "NeZero variable": H + "variable {n : ℕ} [NeZero n]\ntheorem foo : n ≠ 0 := by sorry",
    "letI in the type": H
    + "theorem foo : letI : LT ℕ := ⟨fun _ _ => True⟩; (3 : ℕ) < 2 := by sorry",
    "haveI in the type": H + "theorem foo : haveI : Fact (1 < 0) := ⟨by decide⟩; True := by sorry",
    "inferInstanceAs in the type": H
    + "theorem foo : @LT.lt ℕ (inferInstanceAs (LT ℕ)) 3 2 := by sorry",
    "let of a class in the type": H
    + "theorem foo : let _ : LT ℕ := ⟨fun _ _ => True⟩; (3 : ℕ) < 2 := by sorry",
    "open renaming": H
    + "open Nat renaming succ → pred\ntheorem foo (n : ℕ) : n.pred = n + 1 := by sorry",
    "open hiding": H + "open Real hiding sqrt\ntheorem foo : Real.sqrt 4 = 2 := by sorry",
    "shadowing variable": H
    + "variable (Real : Type) [Field Real]\ntheorem foo (x : Real) : x * x = 2 := by sorry",
    "look-alike variable": H
    + "variable (Νat : Type) [Field Νat]\ntheorem foo (x : Νat) : x * x = 2 := by sorry",
    "look-alike binder": H
    + "theorem foo (Νat : Type) [Field Νat] (x : Νat) : x * x = 2 := by sorry",
    "deep prefix nesting": H + "theorem foo : " + "¬" * 80_000 + "True := by sorry",
    "deep negation": H + "theorem foo (x : ℤ) : " + "- " * 40_000 + "x = x := by sorry",
    "instance keyword": H
    + "instance : LT ℕ := ⟨fun _ _ => True⟩\ntheorem foo : (3 : ℕ) < 2 := by sorry",
    "attribute instance": H
    + "def bad : LT ℕ := ⟨fun _ _ => True⟩\nattribute [local instance] bad\n"
    + "theorem foo : (3 : ℕ) < 2 := by sorry",
    "@[instance] def": H
    + "@[instance] def bad : LT ℕ := ⟨fun _ _ => True⟩\ntheorem foo : (3 : ℕ) < 2 := by sorry",
    "local notation": H + 'local notation "ℕ" => ℤ\ntheorem foo : ∃ n : ℕ, n < 0 := by sorry',
}
# Variables of objects and classes over them: accepted in a model's block.
GENERATED_ACCEPTED: dict[str, str] = {
    "group variable": H
    + "variable {G : Type*} [Group G]\ntheorem foo (g : G) : g * g⁻¹ = 1 := by sorry",
    "inner product space": H
    + "variable {E : Type*} [NormedAddCommGroup E] [InnerProductSpace ℝ E]\n"
    + "theorem foo (x : E) : ‖x‖ ^ 2 = inner x x := by sorry",
    "module over a ring": H
    + "variable {R M : Type*} [CommRing R] [AddCommGroup M] [Module R M]\n"
    + "theorem foo (r : R) (m : M) : r • m = r • m := by sorry",
    "let of a value": H + "theorem foo : let x := 1; x + 1 = 2 := by sorry",
    "have of a fact": H + "theorem foo : have h : 1 = 1 := rfl; True := by sorry",
    "open with a list": H + "open Real (pi)\ntheorem foo : pi > 3 := by sorry",
}

# (code, the flag) at the benchmark level.
BENCHMARK_FLAGGED: dict[str, tuple[str, str]] = {
    "instance keyword on ℕ": (GENERATED_REFUSED["instance keyword"], "core instance"),
    "@[instance] def": (GENERATED_REFUSED["@[instance] def"], "core instance"),
    "attribute [instance]": (
        H + "def bad : LT ℕ := ⟨fun _ _ => True⟩\nattribute [instance] bad\n"
        "theorem foo : (3 : ℕ) < 2 := by sorry",
        "core instance",
    ),
    "attribute [local instance]": (GENERATED_REFUSED["attribute instance"], "core instance"),
    "attribute [-instance]": (
        H + "attribute [-instance] instLTNat\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "instance",
    ),
    "instance on an alias": (
        H + "abbrev N := ℕ\ninstance : LT N := ⟨fun _ _ => True⟩\n"
        "theorem foo : (3 : N) < 2 := by sorry",
        "core instance",
    ),
    "instance on _root_.Nat": (
        H + "instance : LT _root_.Nat := ⟨fun _ _ => True⟩\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "core instance",
    ),
    "instance on a Mathlib type": (
        H + "noncomputable instance : LinearOrder (Polynomial ℚ) := Classical.choice sorry_free\n"
        "theorem foo : True := by sorry",
        "instance",
    ),
    "local notation ℕ": (GENERATED_REFUSED["local notation"], "notation"),
    "local notation3 π": (
        H + 'local notation3 "π" => (3 : ℝ)\ntheorem foo : π = 3 := by sorry',
        "notation",
    ),
    "def shadowing the library": (
        H + "def Nat.factorial (n : ℕ) : ℕ := 0\ntheorem foo : Nat.factorial 3 = 0 := by sorry",
        "shadowing",
    ),
    "def in a custom namespace shadowing the library": (
        H + "namespace Mine\ndef Real.sqrt (x : ℝ) : ℝ := 0\nend Mine\nopen Mine\n"
        "theorem foo : True := by sorry",
        "shadowing",
    ),
    "variable shadowing": (
        H + "variable (Polynomial : Type)\ntheorem foo (p : Polynomial) : p = p := by sorry",
        "shadowing",
    ),
    "look-alike name": (
        H + "def Νat := ℤ\ntheorem foo (n : Νat) : n = n := by sorry",
        "look-alike",
    ),
    "look-alike binder of the target": (
        H + "theorem foo (Νat : Type) [Field Νat] (x : Νat) : x * x = 2 := by sorry",
        "look-alike",
    ),
    "look-alike in Cyrillic": (
        H + "def «Reаl» := ℚ\ntheorem foo (x : «Reаl») : x = x := by sorry",
        "look-alike",
    ),
}
# The instance on a Mathlib type has a proof of its own (`sorry_free` is not `sorry`); in a
# real file it would be a term; here only hygiene sees it.

# (code, rule, what the reason must say, what it must not say)
TRUE_REASONS: dict[str, tuple[str, str, str, str]] = {
    "instance on the item's own type": (
        H + "structure Pt where\n  x : ℕ\ninstance : Inhabited Pt := ⟨⟨0⟩⟩\n"
        "theorem foo : (default : Pt).x = 0 := by sorry",
        "instance",
        "which the item declares",
        "core",
    ),
    "attribute on a declaration of ℕ": (
        GENERATED_REFUSED["attribute instance"],
        "core instance",
        "on ℕ",
        "which the item declares",
    ),
}

# name → code: theorems named as Lean prints names; each must pass the compiled check.
NAMED: dict[str, str] = {
    "mul_inv_cancel'": H + "theorem mul_inv_cancel' (x : ℚ) (h : x ≠ 0) : x * x⁻¹ = 1 := by sorry",
    "even_add''": H + "theorem even_add'' (m n : ℕ) : Even (m + n) ↔ Even m ↔ Even n := by sorry",
    "«two plus two»": H + "theorem «two plus two» : 2 + 2 = 4 := by sorry",
    "Foo.«a.b»": H + "namespace Foo\ntheorem «a.b» : True := by sorry\nend Foo",
    "θ_pos": H + "theorem θ_pos : (0 : ℝ) < 1 := by sorry",
    "«теорема»": H + "theorem «теорема» : (1 : ℕ) = 1 := by sorry",
}

MULTI_PART = (
    H + "def f (n : ℕ) : ℕ := n + 1\n"
    "theorem foo_part1 : ∃ n : ℕ, 0 < f n := by sorry\n"
    "theorem foo_part2 : 0 < foo_part1.choose := by sorry"
)
MULTI_PART_NAMES = ["foo_part1", "foo_part2"]

# FATE-M's shape of an instance item (written for math2): the target is an instance.
INSTANCE_ITEM = (
    H + "variable {G : Type*} [Group G] [Fintype G]\n"
    "/-- A group of order two is commutative. -/\n"
    "instance comm_of_card_two (h : Fintype.card G = 2) : Std.Commutative (α := G) (· * ·) := by\n"
    "  sorry"
)
