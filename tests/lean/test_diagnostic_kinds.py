"""The diagnostic kinds added for issue 9, in Lean's old (≤ 4.9) and new (≥ 4.19) wordings,
directly and through the checker against the fake REPL."""

import pytest

from math2.lean.backends import ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Status
from math2.lean.diagnostics import Kind, classify_text
from math2.lean.pool import PoolConfig
from math2.lean.testing.fake_repl import WORDING
from tests.lean.conftest import fake_argv

CASES = {"rewrite_failed": Kind.REWRITE_FAILED, "motive": Kind.MOTIVE_NOT_TYPE_CORRECT}
CASES["function_expected"] = Kind.FUNCTION_EXPECTED
CASES["heartbeat"] = Kind.HEARTBEAT_TIMEOUT


@pytest.mark.parametrize("wording", sorted(WORDING))
@pytest.mark.parametrize("case", sorted(CASES))
def test_new_kinds_in_both_wordings(wording: str, case: str) -> None:
    text = WORDING[wording][case].format(n="f x")
    assert classify_text(text)[0] is CASES[case]


@pytest.mark.parametrize(
    "text",
    [
        "Try this: set_option maxHeartbeats 400000 in",
        "Try this:\n  set_option maxHeartbeats 800000 in\n  theorem foo : True := trivial",
        "Try this: exact Nat.one_pos",
    ],
)
def test_try_this_is_a_suggestion_not_a_timeout(text: str) -> None:
    assert classify_text(text, "info")[0] is Kind.SUGGESTION


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("rewrite failed, equality or iff proof expected\n  ℕ", Kind.REWRITE_FAILED),
        ("motive is not type correct:\n  fun x => P x", Kind.MOTIVE_NOT_TYPE_CORRECT),
        ("function expected at\n  h\nterm has type\n  0 < x", Kind.FUNCTION_EXPECTED),
        ("linarith failed to find a contradiction", Kind.TACTIC_FAILED),
        ("the heartbeats option", Kind.OTHER),  # the word alone is not a timeout
    ],
)
def test_other_wordings(text: str, kind: Kind) -> None:
    assert classify_text(text)[0] is kind


@pytest.mark.parametrize("wording", sorted(WORDING))
async def test_kinds_reach_the_checker_result(wording: str) -> None:
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--wording", wording), size=1))
    checker = LeanChecker(backend, timeout_s=10)
    try:
        for case, kind in CASES.items():
            code = f"import Mathlib\ntheorem foo : True := sorry -- fake: error {case} g"
            r = await checker.check(CheckItem(id=case, code=code, name="foo"))
            assert (r.status, r.passed) == (Status.ERROR, False)
            assert r.diagnostics[0].kind is kind, r.diagnostics
    finally:
        await backend.close()
