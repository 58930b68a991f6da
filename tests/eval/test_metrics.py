"""pass@k against exact enumeration, intervals, κ, and SC/CC on hand-computed runs."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from math2.eval import SampleResult, bootstrap_interval, cohen_kappa, pass_at_k, score


def _enumerate(n: int, c: int, k: int) -> float:
    """Fraction of the k-subsets of n samples (c correct) that hold a correct one."""
    correct = set(range(c))
    subsets = list(itertools.combinations(range(n), k))
    return sum(1 for s in subsets if correct & set(s)) / len(subsets)


@given(
    st.integers(1, 10).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_at_k_equals_exact_enumeration(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(_enumerate(n, c, k), abs=1e-12)


def test_pass_at_k_known_values_and_errors():
    assert pass_at_k(8, 0, 8) == 0.0
    assert pass_at_k(8, 1, 8) == 1.0
    assert pass_at_k(8, 1, 1) == pytest.approx(1 / 8)
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - math.comb(7, 2) / math.comb(10, 2))
    # large n stays finite and exact enough
    assert pass_at_k(200, 1, 128) == pytest.approx(128 / 200)
    for bad in ((4, 5, 1), (4, 1, 0), (4, 1, 5)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)


def test_bootstrap_interval_brackets_the_mean_and_is_seeded():
    vals = [0.0] * 30 + [1.0] * 70
    iv = bootstrap_interval(vals, seed=1)
    assert iv.low < 0.7 < iv.high and iv.value == pytest.approx(0.7)
    assert iv.low > 0.55 and iv.high < 0.85
    assert bootstrap_interval(vals, seed=1) == iv
    one = bootstrap_interval([0.5])
    assert one.low == one.high == 0.5


def test_cohen_kappa():
    a = [True, True, False, False]
    assert cohen_kappa(a, a) == 1.0
    assert cohen_kappa(a, [not x for x in a]) == -1.0
    # po = 0.75, pe = 0.5 -> 0.5
    assert cohen_kappa(a, [True, True, True, False]) == pytest.approx(0.5)
    assert cohen_kappa([True] * 3, [True] * 3) == 1.0
    assert cohen_kappa([True] * 3, [False] * 3) == 0.0
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError):
        cohen_kappa([True], [True, False])


def _s(bench, item, i, comp, **judges):
    return SampleResult(
        benchmark=bench,
        version_hash="h-" + bench,
        item=item,
        sample=i,
        compiled=comp,
        judges=judges,
    )


def test_sc_cc_on_a_synthetic_run_equal_hand_computed_values():
    # benchmark A, 2 items x 4 samples; B, 1 item x 4 samples; judges j1, j2
    samples = [
        # A/x: compiled 0,1,2; j1 consistent on 0,1; j2 on 0; sample 3 not compiled (j1 ignored)
        _s("A", "x", 0, True, j1=True, j2=True),
        _s("A", "x", 1, True, j1=True, j2=False),
        _s("A", "x", 2, True, j1=False, j2=None),
        _s("A", "x", 3, False, j1=True),
        # A/y: nothing compiles
        *[_s("A", "y", i, False) for i in range(4)],
        # B/z: all compile, j1 consistent on 1 sample, j2 on 2 (one undecided: never a pass)
        _s("B", "z", 0, True, j1=True, j2=True),
        _s("B", "z", 1, True, j1=False, j2=True),
        _s("B", "z", 2, True, j1=False, j2=None),
        _s("B", "z", 3, True, j1=False, j2=False),
    ]
    sc = score(samples, ks=[1, 2, 4], model="toy", resamples=200)
    a, b = sc.benchmarks
    # SC pass@1: A = mean(3/4, 0) = 0.375 ; B = 1
    assert a.sc[1].value == pytest.approx(0.375)
    assert b.sc[1].value == pytest.approx(1.0)
    # SC pass@2 on A/x: 1 - C(1,2)/C(4,2) = 1
    assert a.sc[2].value == pytest.approx(0.5)
    # CC j1 pass@1: A = mean(2/4, 0) = .25 ; B = 1/4
    assert a.cc["j1"][1].value == pytest.approx(0.25)
    assert b.cc["j1"][1].value == pytest.approx(0.25)
    # CC j1 pass@2: A/x c=2: 1 - C(2,2)/C(4,2) = 5/6 -> A = 5/12 ; B c=1: 1 - C(3,2)/C(4,2) = 1/2
    assert a.cc["j1"][2].value == pytest.approx(5 / 12)
    assert b.cc["j1"][2].value == pytest.approx(0.5)
    # CC j2 pass@1: A/x c=1 -> 1/8 ; B c=2 -> 1/2
    assert a.cc["j2"][1].value == pytest.approx(1 / 8)
    assert b.cc["j2"][1].value == pytest.approx(0.5)
    # macro = mean of benchmark means
    assert sc.macro_sc[1].value == pytest.approx((0.375 + 1.0) / 2)
    assert sc.macro_cc["j1"][2].value == pytest.approx((5 / 12 + 0.5) / 2)
    assert sc.macro_cc["j2"][4].value == pytest.approx((0.5 + 1.0) / 2)
    # κ on compiled samples of A: j1 = T,T,F ; j2 = T,F,F -> po 2/3, pe = 2/3*1/3 + 1/3*2/3 = 4/9
    assert a.kappa["j1|j2"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    assert a.per_item["x"] == {"n": 4, "compiled": 3, "consistent": {"j1": 2, "j2": 1}}
    assert a.version_hash == "h-A"


def test_score_refuses_k_above_samples_and_repeated_samples():
    with pytest.raises(ValueError):
        score([_s("A", "x", 0, True)], ks=[2])
    with pytest.raises(ValueError, match="twice"):
        score([_s("A", "x", 0, True), _s("A", "x", 0, False)], ks=[1])
