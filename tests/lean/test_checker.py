"""Checker verdicts against the fake REPL: statements, proofs, hostile code, the cache."""

import json
from pathlib import Path

import pytest

from math2.lean.backends import ReplBackend
from math2.lean.cache import ResultCache
from math2.lean.checker import CheckItem, LeanChecker, Mode, Status
from math2.lean.diagnostics import Kind
from math2.lean.identity import VERSION_COMMAND
from math2.lean.pool import PoolConfig
from tests.lean.conftest import fake_argv


@pytest.fixture
async def checker_and_log(tmp_path: Path, sqlite_store):
    log = tmp_path / "requests.jsonl"
    backend = ReplBackend.from_config(
        PoolConfig(argv=fake_argv("--log", str(log)), size=2, timeout_s=5)
    )
    checker = LeanChecker(backend, cache=ResultCache(sqlite_store), timeout_s=5)
    yield checker, log
    await backend.close()


def sent(log: Path) -> list[str]:
    if not log.exists():
        return []
    cmds = [json.loads(line).get("cmd", "") for line in log.read_text().splitlines()]
    return [c for c in cmds if c != VERSION_COMMAND]  # the identity probe is not a check


STATEMENT = "import Mathlib\ntheorem foo (x : ℝ) : x ≤ x := by sorry"


async def test_statement_passes_with_sorry_and_standard_axioms(checker_and_log) -> None:
    checker, _ = checker_and_log
    r = await checker.check(CheckItem(id="1", code=STATEMENT, name="foo"))
    assert (r.status, r.passed) == (Status.SORRY, True), r.reason
    assert r.axioms == ["Classical.choice", "Quot.sound", "propext", "sorryAx"]
    [d] = r.diagnostics
    assert d.kind is Kind.SORRY and d.pos is not None and d.pos.line == 1  # preamble removed


async def test_statement_with_errors_fails_with_typed_diagnostics(checker_and_log) -> None:
    checker, _ = checker_and_log
    code = (
        "import Mathlib\ntheorem foo : Nat.bar = 1 := by sorry"
        " -- fake: error unknown_constant Nat.bar"
    )
    r = await checker.check(CheckItem(id="2", code=code, name="foo"))
    assert (r.status, r.passed) == (Status.ERROR, False)
    errs = [d for d in r.diagnostics if d.is_error]
    assert errs[0].kind is Kind.UNKNOWN_CONSTANT and errs[0].identifier == "Nat.bar"


async def test_hostile_statement_is_rejected_and_never_sent(checker_and_log) -> None:
    checker, log = checker_and_log
    evil = 'import Mathlib\n#eval IO.Process.run { cmd := "touch", args := #["/tmp/pwned"] }\n'
    r = await checker.check(
        CheckItem(id="3", code=evil + "theorem foo : True := sorry", name="foo")
    )
    assert (r.status, r.passed) == (Status.REJECTED, False)
    assert "#eval" in r.reason
    assert not any("IO.Process" in c for c in sent(log))


async def test_injected_axiom_detected_after_compile(checker_and_log) -> None:
    # The fake REPL lets a directive add an axiom the static check cannot see.
    checker, _ = checker_and_log
    code = "import Mathlib\ntheorem foo : False := by sorry -- fake: axiom cheat"
    r = await checker.check(CheckItem(id="4", code=code, name="foo"))
    assert r.passed is False and "cheat" in r.reason


async def test_proof_mode(checker_and_log) -> None:
    checker, _ = checker_and_log
    ok = await checker.check(
        CheckItem(id="5", code="import Mathlib\ntheorem foo : 1 = 1 := rfl", mode=Mode.PROOF)
    )
    assert (ok.status, ok.passed) == (Status.OK, True)
    # a proof with `sorry` is refused before Lean sees it
    sorry = await checker.check(CheckItem(id="6", code=STATEMENT, mode=Mode.PROOF))
    assert (sorry.status, sorry.passed) == (Status.REJECTED, False)
    assert "sorry" in sorry.reason


async def test_cache_hit_never_recompiles(checker_and_log) -> None:
    checker, log = checker_and_log
    first = await checker.check(CheckItem(id="a", code=STATEMENT, name="foo"))
    n = len(sent(log))
    again = await checker.check(CheckItem(id="b", code=STATEMENT, name="foo"))
    assert len(sent(log)) == n
    assert again.cached and again.id == "b" and again.status == first.status
    assert checker.cache.hits == 1


async def test_cache_survives_a_restart(tmp_path: Path, sqlite_store) -> None:
    log = tmp_path / "log.jsonl"
    for round_ in range(2):
        backend = ReplBackend.from_config(PoolConfig(argv=fake_argv("--log", str(log)), size=1))
        checker = LeanChecker(backend, cache=ResultCache(sqlite_store))
        r = await checker.check(CheckItem(id="x", code=STATEMENT, name="foo"))
        await backend.close()
        assert r.cached is (round_ == 1)
    assert sum("theorem foo" in c for c in sent(log)) == 1


async def test_timeouts_are_not_cached(checker_and_log) -> None:
    checker, _ = checker_and_log
    code = "import Mathlib\ntheorem foo : True := sorry -- fake: slow 10"
    checker.timeout_s = 0.5
    r1 = await checker.check(CheckItem(id="t1", code=code, name="foo"))
    r2 = await checker.check(CheckItem(id="t2", code=code, name="foo"))
    assert r1.status == r2.status == Status.TIMEOUT and not r2.cached


async def test_check_many_streams_every_result(checker_and_log) -> None:
    checker, _ = checker_and_log
    items = [
        CheckItem(id=str(i), code=f"import Mathlib\ntheorem t{i} : True := sorry", name=f"t{i}")
        for i in range(30)
    ]
    results = [r async for r in checker.check_many(items, concurrency=4)]
    assert sorted(int(r.id) for r in results) == list(range(30))
    assert all(r.passed for r in results)


async def test_check_many_with_a_raising_check_returns(checker_and_log) -> None:
    """One check raises: the iteration ends with that exception, promptly, instead of waiting
    forever for a result that will not come; the other checks are cancelled."""
    import asyncio

    checker, _ = checker_and_log
    real = checker.check

    async def flaky(item: CheckItem):
        if item.id == "3":
            raise RuntimeError("backend exploded")
        return await real(item)

    checker.check = flaky  # type: ignore[method-assign]
    items = [
        CheckItem(id=str(i), code=f"import Mathlib\ntheorem t{i} : True := sorry", name=f"t{i}")
        for i in range(10)
    ]

    async def consume() -> list:
        return [r async for r in checker.check_many(items, concurrency=2)]

    with pytest.raises(RuntimeError, match="backend exploded"):
        await asyncio.wait_for(consume(), timeout=30)
