"""Interval estimates for the audit: Wilson score interval and a percentile bootstrap."""

from __future__ import annotations

import math
import random

__all__ = ["bootstrap_interval", "wilson_interval"]


def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials (95% by default).

    With p = k/n: centre (p + z²/2n) / (1 + z²/n), half-width
    z·√(p(1−p)/n + z²/4n²) / (1 + z²/n). (0, 1) when n is 0.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 ≤ k ≤ n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


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
