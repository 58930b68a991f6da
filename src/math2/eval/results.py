"""An eval run's samples read back from the store, every one of them.

A finished sample is read as it finished; a sample whose step raised is a failure at its index
(`timeout` or `error`, with the error text); when the run recorded its grid (`expected` in its
params: per benchmark the version hash and item names, with `options.k`), a sample never tried
is a failure `not_run`. So k never shrinks, and a model that crashes never scores higher than
one that answers wrongly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from math2.eval.benchmarks import BenchmarkVersion
from math2.eval.scoring import SampleFailure, SampleResult
from math2.store import Store
from math2.store.work import Run, RunItem

__all__ = ["collect_results", "expected_samples"]


def expected_samples(
    versions: Sequence[BenchmarkVersion], limit: int | None
) -> dict[str, dict[str, Any]]:
    """The run's grid as stored in its params: per benchmark its version hash and item names."""
    return {
        v.name: {
            "version_hash": v.version_hash,
            "items": [it.name for it in (v.items[:limit] if limit else v.items)],
        }
        for v in versions
    }


def _failure_of(error: str) -> SampleFailure:
    low = error.lower()
    return SampleFailure.TIMEOUT if "timeout" in low or "timed out" in low else SampleFailure.ERROR


def _parse_item(item: str, hashes: dict[str, str]) -> tuple[str, str, str, int] | None:
    """(benchmark, version hash, item, sample) from a run item id `bench/item/sample`."""
    head, _, idx = item.rpartition("/")
    if not idx.isdigit():
        return None
    for bench in sorted(hashes, key=len, reverse=True):
        if head.startswith(bench + "/"):
            return bench, hashes[bench], head[len(bench) + 1 :], int(idx)
    return None


def collect_results(store: Store, run_id: int) -> list[SampleResult]:
    """Every sample of a run, from the store: a finished one as it finished; a failed one, and
    (when the run recorded its grid) one never tried, as a failure at its index with the
    reason — so k never shrinks and a crash never scores higher than a wrong answer."""
    with store.session() as s:
        run = s.get(Run, run_id)
        params = (run.params if run is not None else None) or {}
        rows = list(s.scalars(select(RunItem).where(RunItem.run_id == run_id)))
    expected: dict[str, dict[str, Any]] = params.get("expected") or {}
    k = int((params.get("options") or {}).get("k") or 0)
    hashes = {b: e["version_hash"] for b, e in expected.items()}
    hashes.update({b.split("@")[0]: h for b, h in (params.get("benchmarks") or {}).items()})
    judges = sorted((params.get("options") or {}).get("judges") or [])
    out: dict[tuple[str, str, int], SampleResult] = {}
    for r in rows:
        unreadable = ""
        if r.status == "done" and r.result:
            try:
                res = SampleResult.model_validate(r.result)
            except ValidationError as exc:
                unreadable = f"stored result unreadable: {exc.error_count()} errors"
            else:
                out[(res.benchmark, res.item, res.sample)] = res
                continue
        parsed = _parse_item(r.item, hashes)
        if parsed is None:
            continue
        bench, vh, item, idx = parsed
        if unreadable:
            failure, error = SampleFailure.UNREADABLE, unreadable
        elif r.status == "failed":
            failure, error = _failure_of(r.error or ""), (r.error or "")[:2000]
        else:
            failure, error = SampleFailure.NOT_RUN, (r.error or "")[:2000]
        out[(bench, item, idx)] = SampleResult(
            benchmark=bench,
            version_hash=vh,
            item=item,
            sample=idx,
            compiled=False,
            judges={j: None for j in judges},
            failure=failure,
            error=error,
        )
    for bench, e in expected.items():
        for item in e["items"]:
            for idx in range(k):
                out.setdefault(
                    (bench, item, idx),
                    SampleResult(
                        benchmark=bench,
                        version_hash=e["version_hash"],
                        item=item,
                        sample=idx,
                        compiled=False,
                        judges={j: None for j in judges},
                        failure=SampleFailure.NOT_RUN,
                    ),
                )
    return [out[key] for key in sorted(out)]
