"""Items that compile but do not mean what they claim (issue 19), and items that ask Lean for
unbounded work. Each target is `foo`.

- MEANING: context that changes what the target means. A model's block (the default level) is
  refused; a benchmark's context (written by people) is accepted with the flag named here.
- ALWAYS: refused at every level: proofs that trust compiled code, caps.
- OPTION_BOMBS: resource options without a limit: refused, or clamped in a benchmark's context.
"""

from __future__ import annotations

H = "import Mathlib\n"

MEANING: dict[str, tuple[str, str]] = {
    "LT on ℕ": (
        H + "instance : LT ℕ := ⟨fun _ _ => True⟩\ntheorem foo : (3 : ℕ) < 2 := by sorry",
        "core instance",
    ),
    "OfNat ℕ 2": (
        H + "instance : OfNat ℕ 2 := ⟨3⟩\ntheorem foo : (2 : ℕ) = 3 := by sorry",
        "core instance",
    ),
    "Real.sqrt in a namespace": (
        H + "namespace Real\ndef sqrt (x : ℝ) : ℝ := 0\nend Real\n"
        "theorem foo : Real.sqrt 4 = 0 := by sorry",
        "shadowing",
    ),
    "Foo.Real opened": (
        H + "def Foo.Real := ℕ\nopen Foo\ntheorem foo (x : Real) : x = x := by sorry",
        "shadowing",
    ),
    "variable False included": (
        H + "variable (h : False)\ninclude h in\ntheorem foo : (1 : ℕ) = 2 := by sorry",
        "include",
    ),
    "Fact instance variable": (
        H + "variable {n : ℕ} [Fact (n = 0)]\ntheorem foo : n = 0 := by sorry",
        "hypothesis",
    ),
}

ALWAYS: dict[str, str] = {
    "native_decide helper": H
    + "theorem helper : 10 < 20 := by native_decide\ntheorem foo : 10 < 20 := by sorry",
    "bv_decide helper": H
    + "theorem helper (x : BitVec 4) : x &&& x = x := by bv_decide\n"
    + "theorem foo : True := by sorry",
    "plausible in a def": H + "def helper : True := by plausible\ntheorem foo : True := by sorry",
    "polyrith helper": H
    + "theorem helper (x : ℚ) (h : x = 1) : 2 * x = 2 := by polyrith\n"
    + "theorem foo : True := by sorry",
    "decide +native": H
    + "theorem helper : 2 ^ 10 = 1024 := by decide +native\ntheorem foo : True := by sorry",
    "100k nested parentheses": H
    + "theorem foo : "
    + "(" * 100_000
    + "1"
    + ")" * 100_000
    + " = 1 := by sorry",
    "10 MB statement": H + "theorem foo : True := by sorry\n" + "-- padding\n" * 1_000_000,
    "too many lines": H + "\n" * 20_000 + "theorem foo : True := by sorry",
}

# Resource options over the ceiling: refused in a model's block; in a benchmark's context
# compiled with the ceiling instead (flag `clamped`).
OPTION_BOMBS: dict[str, str] = {
    "maxHeartbeats 0": H + "set_option maxHeartbeats 0 in\ntheorem foo : True := by sorry",
    "maxRecDepth huge": H + "set_option maxRecDepth 1000000000 in\ntheorem foo : True := by sorry",
    "synthInstance.maxHeartbeats 0": H
    + "set_option synthInstance.maxHeartbeats 0 in\ntheorem foo : True := by sorry",
    "synthInstance.maxSize huge": H
    + "set_option synthInstance.maxSize 100000000 in\ntheorem foo : True := by sorry",
}

# Shapes people write that a benchmark's context must accept (and a model's block need not).
BENCHMARK_OK: dict[str, str] = {
    "type continues at column 0": H + "theorem foo (x : ℕ) (h : x + 1 = 2) :\nx = 1 := by sorry",
    "hypotheses at column 0": H
    + "theorem foo (a b : ℝ)\n(h₀ : 0 < a)\n(h₁ : 0 < b) :\na * b > 0 := by sorry",
    "helper lemma with a proof": H
    + "lemma helper (n : ℕ) : n + 0 = n := by simp\n"
    + "theorem foo (n : ℕ) : n + 0 + 0 = n := by sorry",
    "two helper definitions and a lemma": H
    + "def f (n : ℕ) : ℕ := 2 * n\ndef g (n : ℕ) : ℕ := n + n\n"
    + "lemma f_eq_g (n : ℕ) : f n = g n := by unfold f g; ring\n"
    + "theorem foo : f 3 = 6 := by sorry",
    "local notation3": H
    + 'local notation3 "ℝ²" => EuclideanSpace ℝ (Fin 2)\n'
    + "theorem foo (x : ℝ²) : x = x := by sorry",
    "local notation": H
    + 'local notation "‖" x "‖₂" => Real.sqrt (x ^ 2)\ntheorem foo : ‖(1 : ℝ)‖₂ = 1 := by sorry',
}

# A multi-part item: each part is its own target; part 2 uses part 1.
MULTI_PART = (
    H + "theorem foo_part1 : ∃ n : ℕ, 0 < n := by sorry\n"
    "theorem foo_part2 : 0 < foo_part1.choose := by sorry"
)
