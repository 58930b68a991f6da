"""The Kimina and lake backends against protocol-faithful doubles (real HTTP, real processes)."""

import sys
from pathlib import Path

import pytest

from math2.lean.backends import KiminaBackend, LakeBackend
from math2.lean.checker import CheckItem, LeanChecker, Status
from math2.lean.diagnostics import Kind
from math2.lean.testing.fake_kimina import serve

STATEMENT = "import Mathlib\ntheorem foo (x : ℝ) : x ≤ x := by sorry"


@pytest.fixture
def kimina():
    server, url = serve(api_key="k3y")
    yield url
    server.shutdown()


async def test_kimina_statement_passes(kimina: str) -> None:
    backend = KiminaBackend(kimina, api_key="k3y")
    try:
        r = await LeanChecker(backend).check(CheckItem(id="1", code=STATEMENT, name="foo"))
        assert (r.status, r.passed, r.backend) == (Status.SORRY, True, "kimina")
        assert "sorryAx" in (r.axioms or [])
    finally:
        await backend.close()


async def test_kimina_errors_and_timeouts(kimina: str) -> None:
    backend = KiminaBackend(kimina, api_key="k3y")
    checker = LeanChecker(backend, timeout_s=1)
    try:
        err = await checker.check(
            CheckItem(id="2", code=STATEMENT + " -- fake: error unknown_identifier y", name="foo")
        )
        assert err.status is Status.ERROR
        assert err.diagnostics[0].kind is Kind.UNKNOWN_IDENTIFIER
        slow = await checker.check(CheckItem(id="3", code=STATEMENT + " -- fake: hang", name="foo"))
        assert slow.status is Status.TIMEOUT
    finally:
        await backend.close()


async def test_kimina_bad_key_and_unreachable_server_are_backend_errors(kimina: str) -> None:
    for backend in (KiminaBackend(kimina, api_key="wrong"), KiminaBackend("http://127.0.0.1:9")):
        try:
            r = await LeanChecker(backend).check(CheckItem(id="1", code=STATEMENT, name="foo"))
            assert r.status is Status.BACKEND_ERROR and "Kimina" in r.reason
        finally:
            await backend.close()


@pytest.fixture
def lake_project(tmp_path: Path) -> Path:
    (tmp_path / "lakefile.toml").write_text('name = "check"\n')
    return tmp_path


async def test_lake_backend_parses_json_messages(lake_project: Path) -> None:
    argv = [sys.executable, "-m", "math2.lean.testing.fake_lean", "--json"]
    backend = LakeBackend(lake_project, lean_argv=argv)
    checker = LeanChecker(backend)
    ok = await checker.check(CheckItem(id="1", code=STATEMENT, name="foo"))
    assert (ok.status, ok.passed, ok.backend) == (Status.SORRY, True, "lake")
    assert ok.diagnostics[0].pos.line == 1  # header and preamble lines removed
    bad = await checker.check(
        CheckItem(id="2", code=STATEMENT + " -- fake: error type_mismatch h", name="foo")
    )
    assert bad.status is Status.ERROR and bad.diagnostics[0].kind is Kind.TYPE_MISMATCH
    assert not list((lake_project / ".math2-check").iterdir())  # scratch files removed


async def test_lake_backend_timeout_and_missing_tool(lake_project: Path) -> None:
    slow = LakeBackend(lake_project, lean_argv=["sh", "-c", "sleep 30"])
    r = await LeanChecker(slow, timeout_s=0.5).check(CheckItem(id="1", code=STATEMENT, name="foo"))
    assert r.status is Status.TIMEOUT
    missing = LakeBackend(lake_project, lean_argv=["/nonexistent/lake"])
    r = await LeanChecker(missing).check(CheckItem(id="2", code=STATEMENT, name="foo"))
    assert r.status is Status.BACKEND_ERROR and "cannot run" in r.reason
    fails = ["sh", "-c", "echo 'error: unknown package' >&2; exit 1"]
    r = await LeanChecker(LakeBackend(lake_project, lean_argv=fails)).check(
        CheckItem(id="3", code=STATEMENT, name="foo")
    )
    assert r.status is Status.CRASH and "unknown package" in r.reason
