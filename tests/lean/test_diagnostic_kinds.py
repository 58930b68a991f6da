"""Added for issue 9: the new diagnostic kinds, in Lean's old (≤ 4.9) and new (≥ 4.19)
wordings, directly and through the checker against the fake REPL; and the check that the compiled
environment answers for the expected theorem name."""

import pytest

from math2.lean.backends import RawOutcome, ReplBackend
from math2.lean.checker import CheckItem, LeanChecker, Mode, Status
from math2.lean.diagnostics import Kind, classify_text
from math2.lean.identity import LeanIdentity
from math2.lean.pool import PoolConfig
from math2.lean.protocol import CommandResponse
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


class _Answers:
    """A backend whose `#print axioms` answer is about the constant it is given."""

    name = "scripted"

    def __init__(self, subject: str, axioms: str):
        self.subject, self.axioms = subject, axioms

    async def run(self, header: str, body: str, timeout: float) -> RawOutcome:
        msg = {
            "severity": "info",
            "pos": {"line": 4, "column": 0},
            "data": f"'{self.subject}' depends on axioms: [{self.axioms}]",
        }
        return RawOutcome(response=CommandResponse.model_validate({"env": 1, "messages": [msg]}))

    async def identity(self, header: str) -> LeanIdentity:
        return LeanIdentity(kind="fake-scripted", lean_version="fake-scripted", header=header)

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("mode", [Mode.STATEMENT, Mode.PROOF])
async def test_the_environment_must_answer_for_the_expected_name(mode: Mode) -> None:
    proof = "sorry" if mode is Mode.STATEMENT else "trivial"
    axioms = "propext, sorryAx" if mode is Mode.STATEMENT else "propext"
    code = f"import Mathlib\nnamespace A\ntheorem foo : True := {proof}\nend A"
    item = CheckItem(id="1", code=code, name="A.foo", mode=mode)
    ok = await LeanChecker(_Answers("A.foo", axioms)).check(item)
    assert ok.status is not Status.REJECTED and not any(v.rule == "target" for v in ok.violations)
    bad = await LeanChecker(_Answers("A.other", axioms)).check(item)
    assert not bad.passed and [v.rule for v in bad.violations if v.rule == "target"] == ["target"]
