"""Interval estimates for the audit: Wilson score interval and a percentile bootstrap."""

from __future__ import annotations

import random

from math2.checks.calibration import wilson_interval as calibration_wilson

__all__ = ["bootstrap_interval", "wilson_interval"]


def wilson_interval(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval for k successes in n trials; (0, 1) when n is 0.

    One computation for the audit and the checks' calibration (`math2.checks.calibration`,
    through statsmodels); here k and n are checked first, since grades come from a file.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 ≤ k ≤ n, got k={k}, n={n}")
    return calibration_wilson(k, n)


def bootstrap_interval(
    values: list[int], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of 0/1 values (seeded, so reproducible)."""
    n = len(values)
    if n == 0:
        return 0.0, 1.0
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    lo = means[int((1 - level) / 2 * resamples)]
    hi = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi
