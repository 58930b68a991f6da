"""Statements with their context as benchmarks write them (CombiBench, FATE, ProverBench,
ProofNet); all compile in real Lean, and statement hygiene must accept every one."""

from __future__ import annotations

H = "import Mathlib\n"

ACCEPTED: dict[str, str] = {
    "def": H + "def f (n : ℕ) : ℕ := n + 1\ntheorem foo : f 1 = 2 := by sorry",
    "noncomputable def": H
    + "noncomputable def g (x : ℝ) : ℝ := Real.sqrt x\ntheorem foo : g 4 = 2 := by sorry",
    "abbrev": H + "abbrev S := Finset.range 10\ntheorem foo : S.card = 10 := by sorry",
    "structure deriving": H
    + "structure P where\n  a : Fin 2\n  b : Fin 3\nderiving Fintype, DecidableEq\n"
    + "theorem foo : Fintype.card P = 6 := by sorry",
    "class and instance": H
    + "class Good (α : Type) : Prop where\n  ok : True\n"
    + "instance : Good ℕ := ⟨trivial⟩\ntheorem foo : Good ℕ := sorry",
    "inductive": H
    + "inductive Color where\n  | red | green\n  deriving DecidableEq, Fintype\n"
    + "theorem foo : Fintype.card Color = 2 := by sorry",
    "local instance": H
    + "local instance : Fact (Nat.Prime 5) := ⟨by norm_num⟩\n"
    + "theorem foo : (5 : ℕ).Prime := by sorry",
    "attribute local instance": H
    + "attribute [local instance] Classical.propDecidable\ntheorem foo : True := by sorry",
    "stacks attribute": H + "@[stacks 09GF]\ntheorem foo : True := by sorry",
    "let in the type": H + "theorem foo : let x := 3; x + 1 = 4 := by sorry",
    "letI in the type": H
    + "theorem foo (p : ℕ) (hp : p.Prime) : letI : Fact p.Prime := ⟨hp⟩; "
    + "(1 : ZMod p) ≠ 0 := by sorry",
    "have in the type": H + "theorem foo : have h : 1 = 1 := rfl; True := sorry",
    "show from in the type": H + "theorem foo : (show Prop from True) := by sorry",
    "omit in": H
    + "variable {α : Type*} [DecidableEq α]\nomit [DecidableEq α] in\n"
    + "theorem foo (s : Finset α) : s ⊆ s := by sorry",
    "include in": H
    + "variable {G : Type*} [Group G] (hG : Nat.card G = 2)\ninclude hG in\n"
    + "theorem foo : Nat.card G = 2 := by sorry",
    "protected theorem": H + "protected theorem Nat.foo : (1 : ℕ) = 1 := by sorry",
    "simp theorem": H + "@[simp] theorem foo : (1 : ℕ) = 1 := by sorry",
    "docstring": H
    + "/-- The square of a positive real is positive. -/\n"
    + "theorem foo (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by sorry",
    "namespace": H + "namespace Foo\ntheorem foo : True := by sorry\nend Foo",
    "open in": H + "open Real in\ntheorem foo : π > 0 := by sorry",
    "set_option in": H + "set_option maxHeartbeats 400000 in\ntheorem foo : True := by sorry",
    "noncomputable section": H + "noncomputable section\ntheorem foo : True := by sorry\nend",
    "universe": H + "universe u\ntheorem foo (α : Type u) : α = α := by sorry",
    "private def": H + "private def h := 3\ntheorem foo : h = 3 := by sorry",
    "plain string": H + 'theorem foo (s : String := "#eval {x}") : s = s := by sorry',
    "lemma": H + "lemma foo : True := by sorry",
}
