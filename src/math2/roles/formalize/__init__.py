"""The formalize role: natural language in, Lean 4 statements out, MathForm's way.

`run_formalize(settings, store, "statements.jsonl", FormalizeOptions(model=…, judge=…))` runs
the loop of `loop.py` over every statement on `math2.runs` (streaming, resumable), and writes
each accepted statement as agent text for review. It raises NoSearchIndex where the run would
search an index that is not built (`retrieval=False` formalizes without search;
`require_index=False` runs on, each search attempt saying there is no index).
"""

from math2.roles.formalize.feedback import compile_feedback, extract_lean, judge_feedback
from math2.roles.formalize.inputs import input_digest, read_inputs
from math2.roles.formalize.job import (
    FormalizeOptions,
    IndexRetriever,
    NoSearchIndex,
    build_job,
    make_retriever,
    run_formalize,
)
from math2.roles.formalize.loop import formalize_loop
from math2.roles.formalize.records import (
    FormalizeInput,
    FormalizeResult,
    Hit,
    Outcome,
    RoundLog,
)
from math2.roles.formalize.schemas import Defect, DefectKind, JudgeVerdict, PlannerDecision

__all__ = [
    "Defect",
    "DefectKind",
    "FormalizeInput",
    "FormalizeOptions",
    "FormalizeResult",
    "Hit",
    "IndexRetriever",
    "JudgeVerdict",
    "NoSearchIndex",
    "Outcome",
    "PlannerDecision",
    "RoundLog",
    "build_job",
    "compile_feedback",
    "extract_lean",
    "formalize_loop",
    "input_digest",
    "judge_feedback",
    "make_retriever",
    "read_inputs",
    "run_formalize",
]
