"""From sample results to scores: SC and CC pass@k per benchmark and macro, per judge, with κ.

A `SampleResult` is one sample of one item: did it compile, and each judge's verdict on it
(True consistent, False not, None undecided or not judged; only compiled samples are judged).
`score` groups them by benchmark version and item and computes, for each k asked for,
SC pass@k and, under each judge, CC pass@k (compiled and judged consistent), each with a
bootstrap interval, plus the macro average over benchmarks and Cohen's κ between every pair of
judges on the compiled samples.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from math2.eval.metrics import Interval, bootstrap_interval, cohen_kappa, macro_average, pass_at_k

__all__ = ["BenchmarkScore", "SampleFailure", "SampleResult", "Scores", "score"]


class SampleFailure(StrEnum):
    """Why a sample has no answer of its own: it still counts, as a failure, at its index."""

    NO_LEAN = "no_lean"  # the reply held no readable Lean block
    REFUSED = "refused"  # hygiene refused its Lean before any compile
    LEAN_TIMEOUT = "lean_timeout"  # Lean ran out of time on it
    LEAN_UNAVAILABLE = "lean_unavailable"  # Lean crashed, or its backend or header failed
    # the model's reply was cut off at its deadline (finish_reason "timeout"), or the sample's
    # model call (or the whole step) timed out
    TIMEOUT = "timeout"
    ERROR = "error"  # the sample's step raised (a model error, a bad reply, …)
    UNREADABLE = "unreadable"  # its stored result could not be read back
    NOT_RUN = "not_run"  # the run stopped before the sample was tried


class SampleResult(BaseModel):
    """One sample: the benchmark version it belongs to, compile result and judges' verdicts.

    `failure` says why a sample could not be answered normally; such a sample scores 0 (never
    dropped: k stays the k asked for)."""

    benchmark: str  # the version's name (e.g. "minif2f-test")
    version_hash: str
    item: str
    sample: int
    compiled: bool
    judges: dict[str, bool | None] = {}
    statement: str = ""
    failure: SampleFailure | None = None
    error: str = ""  # the error text of a failed sample
    compiled_by: str = ""  # the Lean that compiled it, as it reported itself ("": none ran)

    @property
    def outcome(self) -> str:
        """How the sample ended, for the run's progress: its failure, else whether it compiled."""
        if self.failure is not None:
            return self.failure.value
        return "compiled" if self.compiled else "did_not_compile"


class BenchmarkScore(BaseModel):
    """Scores of one benchmark version."""

    benchmark: str
    version_hash: str
    items: int
    samples_per_item: int
    sc: dict[int, Interval]
    cc: dict[str, dict[int, Interval]]  # judge -> k -> interval
    compiled_by: list[str] = []  # every Lean that compiled a sample of it
    kappa: dict[str, float]  # "judgeA|judgeB" -> κ on compiled samples
    per_item: dict[str, dict[str, Any]]  # item -> {"n", "compiled", "consistent": {judge: c}}
    samples: int = 0  # every sample scored, failures included
    failed: int = 0  # samples with a failure (each scored 0)
    failures: dict[str, int] = {}  # SampleFailure value -> count


class Scores(BaseModel):
    """A whole evaluation: per benchmark and macro average."""

    model: str
    judges: list[str]
    ks: list[int]
    benchmarks: list[BenchmarkScore]
    macro_sc: dict[int, Interval]
    macro_cc: dict[str, dict[int, Interval]]
    compiled_by: list[str] = []  # every Lean behind the SC figures


def score(
    samples: Iterable[SampleResult],
    ks: Iterable[int],
    *,
    model: str = "",
    judges: Iterable[str] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> Scores:
    """Score sample results; k larger than an item's sample count is an error (no padding)."""
    ks = sorted(set(ks))
    by_bench: dict[tuple[str, str], dict[str, list[SampleResult]]] = defaultdict(
        lambda: defaultdict(list)
    )
    seen_judges: set[str] = set()
    for s in samples:
        by_bench[(s.benchmark, s.version_hash)][s.item].append(s)
        seen_judges.update(s.judges)
    judge_list = sorted(judges) if judges is not None else sorted(seen_judges)
    if not by_bench:
        raise ValueError("no samples to score")
    names = [b for b, _ in by_bench]
    if len(set(names)) != len(names):
        raise ValueError("one benchmark name with two version hashes in one evaluation")

    out: list[BenchmarkScore] = []
    sc_vals: dict[int, dict[str, list[float]]] = defaultdict(dict)
    cc_vals: dict[str, dict[int, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    for (bench, vh), items in sorted(by_bench.items()):
        per_item: dict[str, dict[str, Any]] = {}
        counts = []
        for name, ss in sorted(items.items()):
            idx = [s.sample for s in ss]
            if len(set(idx)) != len(idx):
                raise ValueError(f"{bench}:{name}: a sample index appears twice")
            n = len(ss)
            # a failed sample is 0 whatever else it claims
            ok = [s for s in ss if s.failure is None]
            comp = sum(s.compiled for s in ok)
            cons = {
                j: sum(1 for s in ok if s.compiled and s.judges.get(j) is True) for j in judge_list
            }
            per_item[name] = {"n": n, "compiled": comp, "consistent": cons}
            counts.append((n, comp, cons))
        sc: dict[int, Interval] = {}
        cc: dict[str, dict[int, Interval]] = {j: {} for j in judge_list}
        for k in ks:
            vals = [pass_at_k(n, c, k) for n, c, _ in counts]
            sc[k] = bootstrap_interval(vals, resamples=resamples, seed=seed)
            sc_vals[k][bench] = vals
            for j in judge_list:
                jv = [pass_at_k(n, cons[j], k) for n, _, cons in counts]
                cc[j][k] = bootstrap_interval(jv, resamples=resamples, seed=seed)
                cc_vals[j][k][bench] = jv
        kappa = {}
        compiled = [s for ss in items.values() for s in ss if s.compiled and s.failure is None]
        reasons = Counter(
            s.failure.value for ss in items.values() for s in ss if s.failure is not None
        )
        for a, b in itertools.combinations(judge_list, 2):
            kappa[f"{a}|{b}"] = cohen_kappa(
                [s.judges.get(a) is True for s in compiled],
                [s.judges.get(b) is True for s in compiled],
            )
        out.append(
            BenchmarkScore(
                benchmark=bench,
                version_hash=vh,
                items=len(items),
                samples_per_item=min(n for n, _, _ in counts),
                sc=sc,
                cc=cc,
                kappa=kappa,
                per_item=per_item,
                samples=sum(n for n, _, _ in counts),
                failed=sum(reasons.values()),
                failures=dict(sorted(reasons.items())),
                compiled_by=sorted({s.compiled_by for ss in items.values() for s in ss} - {""}),
            )
        )
    macro_sc = {k: macro_average(sc_vals[k], resamples=resamples, seed=seed) for k in ks}
    macro_cc = {
        j: {k: macro_average(cc_vals[j][k], resamples=resamples, seed=seed) for k in ks}
        for j in judge_list
    }
    return Scores(
        model=model,
        judges=judge_list,
        ks=ks,
        benchmarks=out,
        macro_sc=macro_sc,
        macro_cc=macro_cc,
        compiled_by=sorted({c for b in out for c in b.compiled_by}),
    )
