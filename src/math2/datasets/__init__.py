"""Training data from formalize trajectories: SFT records, the RL prompt set, export, reward.

    from math2.datasets import build_dataset, sft_record, rl_prompts, export_dataset

    await build_dataset(settings, store, formalize_run_id, "out/", trace_model="m",
                        source="…", licence="…", registry=reg)   # reconstruct, then export

    sft = [sft_record(result, trace, source="…", licence="…") for result, trace in passed]
    rl = rl_prompts(results, sources={id: (source, licence)})
    export_dataset("out/", sft, rl, registry=shared_registry(...))   # refuses benchmark items,
                                                                     # decontaminates, writes card

    reward = FormalizationReward(settings, store, judge="j")   # r(x, y), batched, cached
    reward.score_batch([(informal, answer)])                  # also verl / OpenRLHF signatures

The folder loads with `datasets.load_dataset("out/", "sft")` (or "sft_sharegpt", "rl").
"""

from math2.datasets.build import build_dataset, formalize_results
from math2.datasets.export import ExportSummary, export_dataset
from math2.datasets.records import (
    SYSTEM_PROMPT,
    RLPrompt,
    SFTRecord,
    rl_prompts,
    sft_record,
    statement_only,
    strip_tactics,
)
from math2.datasets.reward import (
    FormalizationReward,
    compute_score,
    compute_score_batch,
    reward_func,
)

__all__ = [
    "SYSTEM_PROMPT",
    "ExportSummary",
    "FormalizationReward",
    "RLPrompt",
    "SFTRecord",
    "build_dataset",
    "compute_score",
    "compute_score_batch",
    "export_dataset",
    "formalize_results",
    "reward_func",
    "rl_prompts",
    "sft_record",
    "statement_only",
    "strip_tactics",
]
