"""The Lean identity: asked of the backend, in every verdict and in every cache key."""

import json
import sys
from pathlib import Path

from math2.lean.backends import KiminaBackend, LakeBackend, ReplBackend
from math2.lean.cache import ResultCache
from math2.lean.checker import CheckItem, LeanChecker, Status
from math2.lean.identity import LeanIdentity, mathlib_commit
from math2.lean.pool import PoolConfig
from math2.lean.testing import fake_kimina
from tests.lean.conftest import fake_argv

STATEMENT = "import Mathlib\ntheorem foo (x : ℕ) : x ≤ x := by sorry"


def _manifest(project: Path, rev: str) -> Path:
    project.mkdir(parents=True, exist_ok=True)
    (project / "lake-manifest.json").write_text(
        json.dumps({"version": 7, "packages": [{"name": "mathlib", "rev": rev}]})
    )
    return project


async def _check(store, *args: str, cwd: Path | None = None):
    backend = ReplBackend.from_config(PoolConfig(argv=fake_argv(*args), cwd=cwd, size=1))
    checker = LeanChecker(backend, cache=ResultCache(store), timeout_s=5)
    try:
        return await checker.check(CheckItem(id="a", code=STATEMENT, name="foo")), checker
    finally:
        await backend.close()


async def test_a_failing_repl_after_a_passing_one_compiles_afresh(sqlite_store) -> None:
    passing, c1 = await _check(sqlite_store)
    assert passing.passed and not passing.cached
    failing, c2 = await _check(sqlite_store, "--rule", "theorem foo=>error unknown_identifier y")
    assert not failing.cached and failing.status is Status.ERROR and not failing.passed
    assert c1.identity != c2.identity and c1.identity.kind == c2.identity.kind == "fake-repl"
    again, _ = await _check(sqlite_store)
    assert again.cached and again.passed  # the same double answers from the cache


async def test_the_verdict_names_the_lean_and_a_double_says_so(sqlite_store) -> None:
    r, checker = await _check(sqlite_store)
    assert checker.identity.is_fake and r.compiled_by == checker.identity.label()
    assert "fake-repl" in r.compiled_by and "not Lean" in r.compiled_by


async def test_two_mathlib_pins_never_share_an_entry(sqlite_store, tmp_path: Path) -> None:
    a, ca = await _check(sqlite_store, cwd=_manifest(tmp_path / "a", "a" * 40))
    b, cb = await _check(sqlite_store, cwd=_manifest(tmp_path / "b", "b" * 40))
    assert not a.cached and not b.cached
    assert ca.identity.mathlib_commit == "a" * 40 and cb.identity.mathlib_commit == "b" * 40
    assert "Mathlib aaaaaaaaaaaa" in a.compiled_by


def test_an_identity_that_is_not_reported_never_keys_a_cache() -> None:
    real = LeanIdentity(kind="repl", lean_version="4.19.0", mathlib_commit=None)
    assert not real.complete
    try:
        real.cache_part()
    except ValueError as exc:
        assert "incomplete" in str(exc)
    else:
        raise AssertionError("an incomplete identity keyed a cache")
    full = real.model_copy(update={"mathlib_commit": "c" * 40})
    assert (
        full.complete and full.cache_part() != full.model_copy(update={"kind": "lake"}).cache_part()
    )


async def test_a_real_repl_without_a_manifest_is_not_cached(sqlite_store, tmp_path: Path) -> None:
    """A backend that is not a double and whose Mathlib is unknown: compiled, never cached."""
    script = tmp_path / "repl.py"
    script.write_text(
        "import sys\n"
        "from math2.lean.testing import fake_repl\n"
        "fake_repl.Fake.version = lambda self: '4.19.0'\n"
        "fake_repl.main(sys.argv[1:])\n"
    )
    backend = ReplBackend.from_config(
        PoolConfig(argv=[sys.executable, str(script)], cwd=tmp_path, size=1)
    )
    checker = LeanChecker(backend, cache=ResultCache(sqlite_store), timeout_s=5)
    try:
        r1 = await checker.check(CheckItem(id="a", code=STATEMENT, name="foo"))
        r2 = await checker.check(CheckItem(id="b", code=STATEMENT, name="foo"))
    finally:
        await backend.close()
    assert checker.identity.kind == "repl" and checker.identity.lean_version == "4.19.0"
    assert "Mathlib commit not read" in r1.compiled_by
    assert not r1.cached and not r2.cached


async def test_lake_and_kimina_report_themselves(tmp_path: Path) -> None:
    _manifest(tmp_path, "d" * 40)
    lake = LakeBackend(tmp_path, lean_argv=[sys.executable, "-m", "math2.lean.testing.fake_lean"])
    ident = await lake.identity("import Mathlib")
    assert ident.kind == "fake-lean" and ident.mathlib_commit == "d" * 40
    server, url = fake_kimina.serve()
    try:
        kimina = KiminaBackend(url)
        ident = await kimina.identity("import Mathlib")
        await kimina.close()
    finally:
        server.shutdown()
    assert ident.kind == "fake-kimina" and ident.lean_version.startswith("fake-kimina")
    assert mathlib_commit(tmp_path / "nowhere") is None
