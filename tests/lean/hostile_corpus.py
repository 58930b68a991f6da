"""Hostile snippets: every one must be refused before any Lean process sees it.

`EVERY_MODE` holds code that runs while elaborating, reaches IO or Lean's internals, changes the
parser or the kernel's trust, smuggles text into the trusted header, or hides itself in odd
characters: it is refused in every mode, the relaxed one included. `CHECKED_MODES` holds what only
the statement and proof modes refuse (a vacuous or wrong-shaped statement: `sorry` in the type,
two theorems, a real proof where `sorry` is expected, a wrong name).
Each value is a whole item: header, context and target.
"""

from __future__ import annotations

H = "import Mathlib\n"
T = "theorem foo (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by sorry"
HT = H + T

EVERY_MODE: dict[str, str] = {
    # The trusted header: nothing but exact import lines from allowed roots.
    "code on an import line": 'import Mathlib #eval IO.println "x"\n' + T,
    "semicolon on an import line": 'import Mathlib; #eval IO.println "x"\n' + T,
    "import Lean.Elab": "import Mathlib\nimport Lean.Elab.Frontend\n" + T,
    "import Lean": "import Lean\n" + T,
    "import of an unknown root": "import Mathlib\nimport Evil.Module\n" + T,
    "import in the body": HT + "\nimport Mathlib.Tactic",
    "eval between comments": H + '/- c -/ #eval IO.getEnv "HOME" /- -/\n' + T,
    "eval on a comment line": H + '-- ok\n#eval IO.getEnv "HOME" -- ok\n' + T,
    # #-commands.
    "eval shell": H + '#eval IO.Process.run { cmd := "sh", args := #["-c", "id"] }\n' + T,
    "eval after the theorem": HT + '\n#eval (IO.getEnv "HOME")',
    "exit": HT + "\n#exit",
    "check by_elab": H + "#check (by_elab do return default)\n" + T,
    "print": H + "#print axioms foo\n" + T,
    "reduce": H + "#reduce (2 : ℕ) + 2\n" + T,
    "guard_msgs": H + "#guard_msgs in\n" + T,
    "synth": H + "#synth Inhabited ℕ\n" + T,
    "eval in a section": H + "section\n#eval 1\nend\n" + T,
    # Meta code while elaborating.
    "by_elab in the type": H + "theorem foo : (by_elab do return Lean.mkConst ``True) := sorry",
    "by_elab in a def": H + "def p : Prop := by_elab pure (Lean.mkConst ``True)\n" + T,
    "run_tac in the proof": H + "theorem foo : True := by run_tac pure ()",
    "run_cmd": H + "run_cmd pure ()\n" + T,
    "run_elab": H + "run_elab pure ()\n" + T,
    "run_meta": H + "run_meta pure ()\n" + T,
    "initialize": H + "initialize pure ()\n" + T,
    "builtin_initialize": H + "builtin_initialize pure ()\n" + T,
    "unsafe def": H + "unsafe def f : ℕ := 0\n" + T,
    # (a `partial def` is opaque to the kernel and cannot prove False: accepted in a person's
    # context, tests/lean/test_smaller_faults.py)
    "extern": H + '@[extern "system"] opaque sys : Unit → Unit\n' + T,
    "implemented_by": H + "@[implemented_by foo] def g := 1\n" + T,
    "attribute extern": H + 'attribute [extern "c"] foo\n' + T,
    "csimp attribute": H + "@[csimp] theorem c : @id = @id := rfl\n" + T,
    "init attribute": H + "@[init] def i : Unit := ()\n" + T,
    "tactic attribute": H + "@[tactic skip] def t := 1\n" + T,
    "command_elab attribute": H + "@[command_elab x] def e := 1\n" + T,
    "native_decide": H + "theorem foo : 2 + 2 = 4 := by native_decide",
    "ofReduceBool": H + "theorem foo : True := Lean.ofReduceBool true true rfl ▸ trivial",
    "ofReduceBool in a def": H + "def b := Lean.ofReduceBool\n" + T,
    # IO and Lean's internals, however written.
    "IO in the type": H + "theorem foo : IO.FS.Stream = IO.FS.Stream := sorry",
    "_root_.IO": H + 'def e := _root_.IO.getEnv "HOME"\n' + T,
    "«IO»": H + 'def e := «IO».getEnv "HOME"\n' + T,
    "_root_.«IO»": H + 'def e := _root_.«IO».println "x"\n' + T,
    "EIO": H + "def e : EIO String Unit := pure ()\n" + T,
    "BaseIO": H + "def e : BaseIO Unit := pure ()\n" + T,
    "System": H + 'def e : System.FilePath := "/etc/passwd"\n' + T,
    "Lean.Elab": H + "def e := Lean.Elab.Command.elabCommand\n" + T,
    "Lean.Meta": H + "def e := Lean.Meta.whnf\n" + T,
    "Lean.Compiler": H + "def e := Lean.Compiler.LCNF.toDecl\n" + T,
    "Lean.addDecl": H + "def e := Lean.addDecl\n" + T,
    "open IO in": H + 'open IO in\ndef e := getEnv "HOME"\n' + T,
    "open Lean Elab in": H + "open Lean Elab in\ndef e := Command.elabCommand\n" + T,
    "open Lean.Meta": H + "open Lean.Meta\n" + T,
    "open renaming": H + "open IO renaming println → p\n" + T,
    "export IO": H + "export IO (println)\n" + T,
    "namespace IO": H + "namespace IO\ndef e := 1\nend IO\n" + T,
    "interpolated IO": H + 'def s := s!"{IO.getEnv "HOME"}"\n' + T,
    "interpolated by_elab": H + 'def s := s!"a {(by_elab pure default : ℕ)} b"\n' + T,
    "interpolated _root_.IO": H + 'def s := m!"{_root_.IO.println 1}"\n' + T,
    # Parser, notation and macros.
    "redefine ℝ": H + "def ℝ := ℕ\n" + T,
    "notation ℝ": H + 'notation "ℝ" => ℕ\n' + T,
    "local notation": H + 'local notation "ℝ" => ℕ\n' + T,
    "infixl": H + 'infixl:65 " +\' " => HMul.hMul\n' + T,
    "macro sorry": H + 'macro "sorry" : tactic => `(tactic| rfl)\n' + T,
    "macro_rules": H + "macro_rules | `(tactic| trivial) => `(tactic| rfl)\n" + T,
    "elab": H + 'open Lean Elab in\nelab "evil" : tactic => pure ()\n' + T,
    "elab_rules": H + "elab_rules : tactic | `(tactic| trivial) => pure ()\n" + T,
    "syntax": H + 'syntax "evil" : term\n' + T,
    "declare_syntax_cat": H + "declare_syntax_cat evil\n" + T,
    # The kernel's trust and the checker's own settings.
    "axiom": H + "axiom cheat : False\n" + T,
    "proof by axiom": H + "axiom cheat : False\ntheorem foo : 1 = 2 := cheat.elim",
    "opaque": H + "opaque c : ℕ\n" + T,
    "unif_hint": H + "unif_hint (n : ℕ) where n =?= 0 ⊢ n + 1 =?= 1\n" + T,
    "skip kernel": H + "set_option debug.skipKernelTC true\n" + T,
    "skip kernel in": H + "set_option debug.skipKernelTC true in\n" + T,
    "auto implicit": H + "set_option autoImplicit true\n" + T,
    "trace option": H + "set_option trace.Meta.synthInstance true in\n" + T,
    "unseal": H + "unseal Nat.add in\n" + T,
    "register_option": H + "register_option evil : Bool := { defValue := true }\n" + T,
    # Mathlib's own ways to run code or set options.
    "eval%": H + "def n : ℕ := eval% (2 + 2)\n" + T,
    "sudo set_option": H + "sudo set_option debug.skipKernelTC true\n" + T,
    "sudo in a term": H + "def n : ℕ := sudo set_option debug.skipKernelTC true in 2\n" + T,
    "set_option in a term": H + "def n : ℕ := (set_option debug.skipKernelTC true in 2)\n" + T,
    "set_option in a proof": H + "theorem foo : True := (by set_option trace.Meta true in trivial)",
    "run_conv": H + "theorem foo : 1 = 1 := by conv => run_conv pure ()",
    "unset_option": H + "unset_option autoImplicit\n" + T,
    "simproc": H + "simproc evil (Nat.succ _) := fun _ => pure .continue\n" + T,
    "unknown command word": H + "def n := 1\nwhatsnew in\n" + T,
    # Characters that make the text read otherwise than Lean reads it.
    "bidi override": H + "theorem foo : 1 = 1 \u202e:= by sorry",
    "bidi isolate": H + "theorem foo : 1 = 1 \u2066:= by sorry",
    "zero width space": H + "theorem foo\u200b : 1 = 1 := by sorry",
    "NUL": H + "theorem foo : 1 = 1 := by sorry\x00",
    # Text the lexer cannot close.
    "unterminated comment": H + "/- open\n" + T,
    "unterminated string": H + 'def s := "open\n' + T,
}

CHECKED_MODES: dict[str, str] = {
    "sorry in the type": H + "theorem foo : sorry := sorry",
    "admit in the type": H + "theorem foo : (by admit : Prop) := sorry",
    "sorryAx in the type": H + "theorem foo : sorryAx Prop true := sorry",
    "sorry in a def": H + "def p : Prop := sorry\ntheorem foo : p := sorry",
    "sorry in a variable": H + "variable (h : (sorry : Prop))\n" + T,
    "two theorems": HT + "\ntheorem bar : True := sorry",
    "lemma before": H + "lemma bar : True := sorry\n" + T,
    "no theorem": H + "def foo := 1",
    "example": H + "example : 1 = 1 := sorry",
    "wrong name": H + "theorem bar (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by sorry",
    "definition after": HT + "\ndef z := 1",
    "no proof": H + "theorem foo : True",
}
