"""Figures the seeds publish, shown next to ours in a report (percentages, as published).

MathForm (seed 000): pass@8, SC and CC, six benchmarks; only the figures the summary states are
here (macro averages and three FATE CC values). Herald (seed 001, rebuttal tables): pass@k for
k = 16, 32, 64, 128 on ProofNet-valid, ProofNet-test and miniF2F-test, one metric (compiles and
passes their NLI check), recorded here as CC.
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["PUBLISHED", "Published", "published_for"]


class Published(BaseModel):
    """One published figure."""

    source: str
    model: str
    benchmark: str  # our benchmark name, or "macro"
    metric: str  # "SC" or "CC"
    k: int
    percent: float


_M = "MathForm (arXiv 2608.14221, seed 000)"
_H = "Herald rebuttal (seed 001)"

PUBLISHED: list[Published] = [
    Published(source=_M, model="MathForm-8B", benchmark="macro", metric="SC", k=8, percent=88.06),
    Published(source=_M, model="MathForm-8B", benchmark="macro", metric="CC", k=8, percent=72.37),
    Published(source=_M, model="MathForm-8B", benchmark="fate-m", metric="CC", k=8, percent=97.33),
    Published(source=_M, model="MathForm-8B", benchmark="fate-h", metric="CC", k=8, percent=63.00),
    Published(source=_M, model="MathForm-8B", benchmark="fate-x", metric="CC", k=8, percent=37.00),
    Published(source=_M, model="ReForm-32B", benchmark="macro", metric="SC", k=8, percent=81.61),
    Published(source=_M, model="ReForm-32B", benchmark="macro", metric="CC", k=8, percent=68.41),
]

_HERALD = {
    "Herald Translator": {
        "proofnet-valid": (60.5, 68.1, 76.8, 81.6),
        "proofnet-test": (66.7, 76.9, 83.9, 88.7),
        "minif2f-test": (84.8, 91.8, 95.5, 96.7),
    },
    "InternLM2-Math-Plus-7B": {
        "proofnet-valid": (13.5, 20.0, 33.0, 38.9),
        "proofnet-test": (15.1, 25.3, 36.0, 45.2),
        "minif2f-test": (52.0, 61.1, 67.5, 73.0),
    },
}
for _model, _rows in _HERALD.items():
    for _bench, _vals in _rows.items():
        for _k, _v in zip((16, 32, 64, 128), _vals, strict=True):
            PUBLISHED.append(
                Published(source=_H, model=_model, benchmark=_bench, metric="CC", k=_k, percent=_v)
            )


def published_for(benchmark: str, metric: str, k: int | None = None) -> list[Published]:
    """The published figures for a benchmark name (or "macro") and metric, optionally one k."""
    return [
        p
        for p in PUBLISHED
        if p.benchmark == benchmark and p.metric == metric and (k is None or p.k == k)
    ]
