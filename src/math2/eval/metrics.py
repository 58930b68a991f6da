"""pass@k, SC and CC per benchmark and macro average, bootstrap intervals, Cohen's κ.

pass@k is the unbiased estimator of Chen et al. (2021): with n samples of which c are correct,
pass@k = 1 - C(n-c, k) / C(n, k), computed as a product to stay exact for large n. A
benchmark's pass@k is the mean over its items; the macro average is the mean over benchmarks.

SC (syntax check) counts a sample correct when it compiles; CC (consistency check) when it
compiles and the judge finds it consistent with the informal statement. A sample the judge
could not decide (an unparseable reply, an error) is never a pass.

Bootstrap intervals resample items with replacement (percentile method, seeded so a report is
reproducible).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

__all__ = [
    "Interval",
    "ItemCounts",
    "bootstrap_interval",
    "cohen_kappa",
    "macro_average",
    "pass_at_k",
    "pass_at_k_items",
]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of P(at least one of k draws without replacement is correct)."""
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if k > n:
        raise ValueError(f"k={k} is more than the n={n} samples drawn")
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i)
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


class ItemCounts(BaseModel):
    """One item's samples: n drawn, how many compiled, how many compiled and were consistent."""

    item: str
    n: int
    compiled: int
    consistent: int


def pass_at_k_items(counts: Sequence[tuple[int, int]], k: int) -> list[float]:
    """pass@k of each item from its (n, c)."""
    return [pass_at_k(n, c, k) for n, c in counts]


class Interval(BaseModel):
    """A point estimate with a bootstrap interval (as fractions, 0..1)."""

    value: float
    low: float
    high: float
    level: float = 0.95


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> Interval:
    """Mean of per-item values with a percentile bootstrap interval over items."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("no items")
    mean = float(v.mean())
    if v.size == 1:
        return Interval(value=mean, low=mean, high=mean, level=level)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(resamples, v.size))
    return _percentile_interval(mean, v[idx].mean(axis=1), level)


def _percentile_interval(value: float, boots: np.ndarray, level: float) -> Interval:
    """`value` with the percentile interval of its bootstrap replicates `boots`."""
    a = (1 - level) / 2
    return Interval(
        value=value,
        low=float(np.quantile(boots, a)),
        high=float(np.quantile(boots, 1 - a)),
        level=level,
    )


def macro_average(per_benchmark: Mapping[str, Sequence[float]], **kw) -> Interval:
    """Mean over benchmarks of the benchmark means; the interval resamples items in each."""
    names = sorted(per_benchmark)
    if not names:
        raise ValueError("no benchmarks")
    arrays = [np.asarray(per_benchmark[b], dtype=float) for b in names]
    value = float(np.mean([a.mean() for a in arrays]))
    resamples = kw.get("resamples", 2000)
    level = kw.get("level", 0.95)
    rng = np.random.default_rng(kw.get("seed", 0))
    boots = np.zeros(resamples)
    for a in arrays:
        boots += a[rng.integers(0, a.size, size=(resamples, a.size))].mean(axis=1)
    boots /= len(arrays)
    return _percentile_interval(value, boots, level)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two judges' binary verdicts on the same samples (1.0 when both give one
    and the same verdict throughout, where chance agreement is 1; nan for no samples)."""
    if len(a) != len(b):
        raise ValueError("the two judges rated different numbers of samples")
    n = len(a)
    if n == 0:
        return math.nan
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    po = float((x == y).mean())
    px, py = x.mean(), y.mean()
    pe = float(px * py + (1 - px) * (1 - py))
    if pe == 1.0:  # both constant and equal, so po == 1 too
        return 1.0
    return (po - pe) / (1 - pe)
