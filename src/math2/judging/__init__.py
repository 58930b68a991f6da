"""The consistency judge, for every caller: its answer's schema, the call, the verdict.

MathForm's judge reads an informal statement and a Lean statement through the
`formalize/judge` template and answers with a `JudgeVerdict` (the six defect kinds, each with
the clause it concerns). The formalize loop, the `consistency` check, the eval harness and the
RL reward all ask it through here, so they ask the same question and read the answer the same
way: consistent only with no defect; an answer that cannot be read is `None`, never a pass.
"""

from math2.judging.call import JUDGE_TEMPLATE, judge, judge_in_run, judge_template, passed
from math2.judging.schemas import Defect, DefectKind, JudgeVerdict

__all__ = [
    "JUDGE_TEMPLATE",
    "Defect",
    "DefectKind",
    "JudgeVerdict",
    "judge",
    "judge_in_run",
    "judge_template",
    "passed",
]
