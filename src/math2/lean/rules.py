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
    "native_decide": "trusts the compiler (Lean.ofReduceBool)",
    "ofReduceBool": "trusts the compiler",
    "ofReduceNat": "trusts the compiler",
    "implemented_by": "replaces code by other code",
    "extern": "calls external code",
    "initialize": "runs code when loaded",
    "builtin_initialize": "runs code when loaded",
    "decide!": "trusts the compiler",
}
SORRY_WORDS = frozenset({"sorry", "admit", "sorryAx"})
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


def normalise_name(text: str) -> str:
    """A name as Lean resolves it for the rules: «» removed, a leading `_root_.` dropped."""
    name = text.replace("«", "").replace("»", "")
    while name.startswith("_root_."):
        name = name[len("_root_.") :]
    return name
