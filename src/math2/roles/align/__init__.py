"""The align role (K6.7): a candidate pair judged into a crosswalk edge, or kept with its reason.

    from math2.roles.align import AlignOptions, run_align
    summary = await run_align(settings, store, AlignOptions(model="judge", dataset="theoremgraph"))

See `docs/align.md`.
"""

from math2.roles.align.bindings import (
    BindingBlocked,
    DefinitionToReview,
    confirm_definition,
    definitions_to_review,
    require_definitions_confirmed,
)
from math2.roles.align.candidates import (
    HumanPair,
    list_pairs,
    propose_by_search,
    scan_stacks,
    stacks_pairs,
)
from math2.roles.align.check import CheckOptions, run_check
from math2.roles.align.evaluate import LabelledPair, Scores, judge_pairs, labelled_pairs, score
from math2.roles.align.job import AlignOptions, build_job, record_verdict, run_align
from math2.roles.align.lifecycle import can_confirm, propose_binding, propose_from_crosswalks
from math2.roles.align.schemas import (
    AlignOutcome,
    AlignPair,
    AlignResult,
    AlignVerdict,
    Direction,
    EdgeDirection,
    EdgeRelation,
    Relation,
    Side,
)
from math2.roles.align.sides import pair_of
from math2.roles.align.systems import SystemCandidates, propose_for_systems

__all__ = [
    "AlignOptions",
    "AlignOutcome",
    "AlignPair",
    "AlignResult",
    "AlignVerdict",
    "BindingBlocked",
    "CheckOptions",
    "DefinitionToReview",
    "Direction",
    "EdgeDirection",
    "EdgeRelation",
    "HumanPair",
    "LabelledPair",
    "Relation",
    "Scores",
    "Side",
    "SystemCandidates",
    "build_job",
    "can_confirm",
    "confirm_definition",
    "definitions_to_review",
    "judge_pairs",
    "labelled_pairs",
    "list_pairs",
    "pair_of",
    "propose_binding",
    "propose_by_search",
    "propose_for_systems",
    "propose_from_crosswalks",
    "record_verdict",
    "require_definitions_confirmed",
    "run_align",
    "run_check",
    "scan_stacks",
    "score",
    "stacks_pairs",
]
