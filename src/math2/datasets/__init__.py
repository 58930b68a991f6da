"""Training data from formalize trajectories: SFT records, the RL prompt set, export, reward.

    from math2.datasets import sft_record, rl_prompts, export_dataset

    sft = [sft_record(result, trace, source="…", licence="…") for result, trace in passed]
    rl = rl_prompts(results, sources={id: (source, licence)})
    export_dataset("out/", sft, rl, registry=shared_registry(...))   # refuses benchmark items,
                                                                     # decontaminates, writes card

The folder loads with `datasets.load_dataset("out/", "sft")` (or "sft_sharegpt", "rl").
"""

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

__all__ = [
    "SYSTEM_PROMPT",
    "ExportSummary",
    "RLPrompt",
    "SFTRecord",
    "export_dataset",
    "rl_prompts",
    "sft_record",
    "statement_only",
    "strip_tactics",
]
