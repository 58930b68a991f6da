/-
Released under Apache 2.0 license as described in the file LICENSE.
-/
import Mathlib.Demo.Chain

namespace More

/-- Doubling a natural number. -/
def double (n : ℕ) : ℕ := 2 * n

theorem double_zero : double 0 = 0 := rfl

theorem double_add (a b : ℕ) : double (a + b) = double a + double b := by
  unfold double; ring

theorem double_even (n : ℕ) : Even (double n) := ⟨n, by unfold double; ring⟩

theorem add_zero' (n : ℕ) : n + 0 = n := rfl

theorem lt_succ' (n : ℕ) : n < n + 1 := Nat.lt_succ_self n

end More
