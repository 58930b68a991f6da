"""Checks against a real Lean toolchain with Mathlib; skipped where there is none.

Run them with MATH2_LEAN__PROJECT_DIR pointing at a project made by `math2 lean setup`.
"""

import os
import shutil

import pytest

from math2.config import load_settings
from math2.lean import CheckItem, Status
from math2.services import make_checker

pytestmark = pytest.mark.lean


@pytest.fixture
def checker():
    settings = load_settings()
    project = settings.lean.project_dir
    if not project or not os.path.isdir(project) or not shutil.which("lake"):
        pytest.skip("no Lean toolchain and Mathlib project (see math2 lean setup)")
    c = make_checker(settings)
    yield c


async def test_real_statement_and_error(checker) -> None:
    try:
        ok = await checker.check(
            CheckItem(
                id="ok", code="import Mathlib\ntheorem t (x : ℝ) : x ≤ x := by sorry", name="t"
            )
        )
        assert ok.status is Status.SORRY and ok.passed
        bad = await checker.check(
            CheckItem(
                id="bad", code="import Mathlib\ntheorem t : Nat.no_such = 1 := by sorry", name="t"
            )
        )
        assert bad.status is Status.ERROR
    finally:
        await checker.backend.close()
