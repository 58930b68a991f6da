"""The informalize role: Lean declarations in, natural-language statements out, Herald's way.

`run_informalize(settings, store, InformalizeOptions(model=…, translator=…))` writes the
informal statement of each declaration of a library (the store's mentions, a Lean source tree,
or lean_scout tactic states) in dependency order, each prompt carrying the text already written
for what the declaration uses; checks every output with the battery (lints, back-translation +
NLI); and stores it as agent text waiting for a person.
"""

from math2.roles.informalize.job import (
    AUGMENTATIONS,
    DescriptionBoard,
    InformalizeOptions,
    build_job,
    informalize_loop,
    load_decls,
    run_informalize,
)
from math2.roles.informalize.records import Decl, InformalizeResult
from math2.roles.informalize.sources import (
    decls_from_lean_dir,
    decls_from_store,
    decls_from_tactics,
    dependency_order,
    goal_statement,
    resolve_deps,
)

__all__ = [
    "AUGMENTATIONS",
    "Decl",
    "DescriptionBoard",
    "InformalizeOptions",
    "InformalizeResult",
    "build_job",
    "decls_from_lean_dir",
    "decls_from_store",
    "decls_from_tactics",
    "dependency_order",
    "goal_statement",
    "informalize_loop",
    "load_decls",
    "resolve_deps",
    "run_informalize",
]
