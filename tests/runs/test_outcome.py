"""A run's failure breakdown: which items failed, why, counted with an example each."""

from __future__ import annotations

from math2.runs.outcome import REASON_CHARS, failure_reason, run_outcome
from math2.store.work import Run, RunItem

CONNECT = "formalize.loop: LLMError: call to gen failed: ConnectError: refused"


def _run(store, items: list[tuple[str, str, str | None, dict | None]]) -> int:
    with store.session() as s:
        run = Run(job="demo", key=f"k{len(items)}", spec_hash="h", spec={}, params={}, stats={})
        s.add(run)
        s.flush()
        for item, status, error, result in items:
            s.add(RunItem(run_id=run.id, item=item, status=status, error=error, result=result))
        return run.id


def test_reasons_are_counted_most_common_first_with_an_example(sqlite_store) -> None:
    rid = _run(
        sqlite_store,
        [
            ("a", "failed", CONNECT, None),
            ("b", "failed", CONNECT, None),
            ("c", "failed", "TimeoutError: 30 s", None),
            ("d", "done", None, {"outcome": "passed"}),
            ("e", "done", None, {"outcome": "failed"}),  # a negative answer, not a failure
        ],
    )
    with sqlite_store.session() as s:
        o = run_outcome(s, rid)
    assert (o.total, o.failed, o.all_failed) == (5, 3, False)
    assert [(r.reason, r.count, r.example) for r in o.reasons] == [
        (CONNECT, 2, "a"),
        ("TimeoutError: 30 s", 1, "c"),
    ]


def test_every_item_failed_is_all_failed_and_an_empty_run_is_not(sqlite_store) -> None:
    rid = _run(sqlite_store, [("a", "failed", CONNECT, None), ("b", "failed", None, None)])
    empty = _run(sqlite_store, [])
    with sqlite_store.session() as s:
        o, e = run_outcome(s, rid), run_outcome(s, empty)
    assert o.all_failed and o.failed == 2
    assert "failed (no error recorded)" in [r.reason for r in o.reasons]
    assert not e.all_failed and e.total == 0


def test_errors_recorded_in_results_are_failures() -> None:
    eval_sample = {"failure": "timeout", "error": "model call timed out"}
    assert failure_reason("done", None, eval_sample) == "timeout: model call timed out"
    checked = {
        "verdict": "error",
        "outcomes": [
            {"check": "lint", "verdict": "pass"},
            {"check": "judge", "checker": "j", "verdict": "error", "evidence": {"reason": "X"}},
        ],
    }
    assert failure_reason("done", None, checked) == "judge (j): X"
    written = {"verdict": "error", "failed_checks": ["empty reply"]}
    assert failure_reason("done", None, written) == "checks errored: empty reply"
    assert failure_reason("done", None, {"outcome": "unjudged", "error": "no JSON"}) == (
        "unjudged: no JSON"
    )
    # answers of their own: a judged-unfaithful pair, a rejected pair, a formalize failure
    for answer in ({"verdict": "fail"}, {"outcome": "rejected"}, {"outcome": "no_lean"}):
        assert failure_reason("done", None, answer) is None
    assert failure_reason("running", None, None) is None


def test_a_long_reason_is_cut_and_its_whitespace_folded() -> None:
    reason = failure_reason("failed", "x\n" * 1000, None)
    assert reason is not None and len(reason) == REASON_CHARS and "\n" not in reason
