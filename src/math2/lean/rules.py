"""The rules statement hygiene applies: which modules, commands, modifiers, attributes, options
and names are allowed. docs/lean.md gives the grammar and the reason for each refusal."""

from __future__ import annotations

import re

# Import roots a header may name (`import Mathlib.Data.Real.Basic` has root `Mathlib`).
DEFAULT_MODULE_ROOTS = frozenset(
    {"Mathlib", "Batteries", "Aesop", "Init", "Std", "Qq", "Plausible", "ProofWidgets"}
)

THEOREM_KEYWORDS = frozenset({"theorem", "lemma"})
# Definitions a context may hold (their bodies pass the term rules).
DEFINITION_KEYWORDS = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance"})
# Commands that only shape names and variables.
SCOPE_KEYWORDS = frozenset(
    {"open", "namespace", "section", "end", "variable", "variables", "universe", "universes"}
)
ALLOWED_MODIFIERS = {
    "private": "any",
    "protected": "any",
    "noncomputable": "any",
    "public": "any",
    "local": "instance",  # `local instance` only
    "partial": "def",  # opaque to the kernel: it cannot prove False
}

# Attributes allowed in `@[…]` and `attribute […]` (first word of each entry).
ALLOWED_ATTRIBUTES = frozenset(
    {
        "simp", "stacks", "reducible", "irreducible", "semireducible", "instance", "ext",
        "norm_cast", "push_cast", "simps", "nolint", "mk_iff", "coe", "elab_as_elim", "pp_nodot",
        "to_additive", "inherit_doc", "gcongr", "mono", "continuity", "measurability", "fun_prop",
        "positivity", "aesop", "class", "inline", "specialize", "local", "scoped", "refl",
        "symm", "trans", "congr", "deprecated", "nontriviality", "field_simps", "integral_simps",
        "grind", "wlog", "induction_eliminator", "cases_eliminator", "default_instance",
    }
)  # fmt: skip

# Options a statement may set; autoImplicit may only be set to false.
ALLOWED_OPTION = re.compile(
    r"^(maxHeartbeats|maxRecDepth|synthInstance\.maxHeartbeats|synthInstance\.maxSize"
    r"|pp\.[\w.]+|linter\.[\w.]+|autoImplicit|relaxedAutoImplicit|push_neg\.use_distrib"
    r"|checkBinderAnnotations)$"
)

# Words that run code at elaboration time, or make the kernel trust the compiler.
CODE_WORDS = {
    "by_elab": "runs meta code while elaborating",
    "run_tac": "runs meta code",
    "run_elab": "runs meta code",
    "run_meta": "runs meta code",
    "run_cmd": "runs meta code",
    "implemented_by": "replaces code by other code",
    "extern": "calls external code",
    "initialize": "runs code when loaded",
    "builtin_initialize": "runs code when loaded",
    "run_conv": "runs meta code (Mathlib's conv `run_tac`)",
    "sudo": "sets any option, the checking ones included (Mathlib's `sudo set_option`)",
}
# Words whose proofs the kernel does not check: they trust compiled code (`Lean.ofReduceBool`,
# `Lean.ofReduceNat`, `Lean.trustCompiler`) or call out to another program. Refused unless the
# caller (never the data) passes `allow_compiled=True`.
COMPILED_WORDS = {
    "native_decide": "trusts the compiler (Lean.ofReduceBool)",
    "ofReduceBool": "trusts the compiler",
    "ofReduceNat": "trusts the compiler",
    "trustCompiler": "trusts the compiler",
    "decide!": "trusts the compiler",
    "native": "asks for native evaluation (trusts the compiler)",
    "bv_decide": "trusts the compiler (Lean.ofReduceBool through a compiled SAT checker)",
    "bv_check": "trusts the compiler (Lean.ofReduceBool)",
    "plausible": "runs compiled code to search for counterexamples",
    "slim_check": "runs compiled code to search for counterexamples",
    "polyrith": "calls an external program over the network",
}
# The axioms those proofs add; accepted only with `allow_compiled=True`.
COMPILER_AXIOMS = frozenset({"Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})

# Upper bounds on the resource options an item may set (0 means "no limit" to Lean: refused).
# Items are checked under the pool's wall-clock timeout; these keep one item from asking Lean
# for unbounded work inside it.
OPTION_CEILINGS = {
    "maxHeartbeats": 2_000_000,
    "maxRecDepth": 10_000,
    "synthInstance.maxHeartbeats": 400_000,
    "synthInstance.maxSize": 1_024,
}

# Words that stand for `sorry`, read from Lean's own sources (src/Init/Tactics.lean of
# leanprover/lean4, read at commit 00165f832963 of the search index): the term `sorry` and the
# axiom `sorryAx`; the tactic macros `sorry` and `admit` (`exact @sorryAx _ false`) and `stop`
# (`repeat sorry`: it discards the rest of a proof). docs/lean.md lists them with the source.
SORRY_WORDS = frozenset({"sorry", "admit", "sorryAx", "stop"})
# Names (after `_root_.` and «» are removed) that reach IO or the elaborator's internals.
FORBIDDEN_ROOTS = re.compile(r"^(IO|EIO|BaseIO|System|Lean)(\.|$)")

# Commands never allowed, with the reason.
FORBIDDEN_COMMANDS = {
    "import": "imports may only stand in the header, before everything else",
    "axiom": "adds an axiom (a statement could become vacuous)",
    "opaque": "adds an opaque constant (possibly implemented by code)",
    "constant": "adds a constant without a definition",
    "example": "is not a named theorem",
    "mutual": "mutual blocks are not part of the statement grammar",
    "alias": "renames declarations",
    "export": "re-exports names into another namespace",
    "notation": "defines notation (a macro)",
    "infix": "defines notation (a macro)",
    "infixl": "defines notation (a macro)",
    "infixr": "defines notation (a macro)",
    "prefix": "defines notation (a macro)",
    "postfix": "defines notation (a macro)",
    "macro": "defines a macro (code run while elaborating)",
    "macro_rules": "defines a macro (code run while elaborating)",
    "elab": "defines an elaborator (code run while elaborating)",
    "elab_rules": "defines an elaborator (code run while elaborating)",
    "syntax": "changes the parser",
    "declare_syntax_cat": "changes the parser",
    "run_cmd": "runs meta code",
    "run_tac": "runs meta code",
    "run_elab": "runs meta code",
    "run_meta": "runs meta code",
    "initialize": "runs code when loaded",
    "builtin_initialize": "runs code when loaded",
    "add_decl_doc": "is not part of the statement grammar",
    "register_option": "registers an option (meta code)",
    "declare_config_elab": "defines an elaborator",
    "unif_hint": "changes unification",
    "suppress_compilation": "changes compilation",
    "unseal": "changes definitional unfolding",
    "seal": "changes definitional unfolding",
    "irreducible_def": "is not part of the statement grammar",
    "assert_not_exists": "is not part of the statement grammar",
    "coinductive": "is not part of the statement grammar",
}
# Commands of Lean, Batteries, Aesop and Mathlib outside the statement grammar; several run meta
# code (simprocs, rule sets, attributes made on the fly). They are keywords once Mathlib is
# imported, so no statement can use them as names.
OTHER_FORBIDDEN_COMMANDS = (
    "simproc", "dsimproc", "simproc_decl", "dsimproc_decl", "builtin_simproc", "builtin_dsimproc",
    "builtin_simproc_decl", "notation3", "proof_wanted", "library_note",
    "initialize_simps_projections", "register_simp_attr", "register_label_attr",
    "add_aesop_rules", "erase_aesop_rules", "declare_aesop_rule_sets", "whatsnew", "recall",
    "grind_pattern", "declare_simp_like_tactic", "mk_iff_of_inductive_prop",
    "register_builtin_option", "binder_predicate", "assert_not_imported", "test_extern",
    "declare_bitwise_int_theorems", "set_premise_selector", "count_heartbeats", "open_locale",
    "elab_stx_quot", "compile_inductive", "compile_def", "unset_option",
    "insert_to_additive_translation", "name_poly_vars", "name_power_vars", "extend_docs",
    "unsuppress_compilation",
)  # fmt: skip
FORBIDDEN_COMMANDS.update(
    dict.fromkeys(OTHER_FORBIDDEN_COMMANDS, "is not part of the statement grammar (a command)")
)
# Words that may begin a line inside a command without beginning a command of their own.
CONTINUATION_WORDS = frozenset(
    {"where", "deriving", "termination_by", "decreasing_by", "with", "extends", "then", "else"}
)


def normalise_name(text: str) -> str:
    """A name as Lean resolves it for the rules: «» removed, a leading `_root_.` dropped."""
    name = text.replace("«", "").replace("»", "")
    while name.startswith("_root_."):
        name = name[len("_root_.") :]
    return name
