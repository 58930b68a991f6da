"""What the suite needs to run on several pytest-xdist workers (scripts/test.sh: `-n 2 --dist
loadgroup`): the groups of tests that one worker runs, each group whole.

* `ray`: every test marked `ray` (tests/runs/test_ray*.py, test_roles_on_ray.py) — each module
  starts a Ray cluster of its own (one of three nodes); two at once on two cores starve each
  other's heartbeats and lose nodes, so one worker runs them all, one module after another.
* `llm`: every test using the session's `llama_server` — one llama.cpp server with SmolLM2 for
  them all, not one per worker (each holds a core while it answers).
* otherwise the test's module: a module-scoped fixture (an imported library, a started browser)
  is made once, not once per worker that gets one of its tests.

The groups are given in xdist's workers only (where its scheduler reads them); a run without
xdist is untouched. Every other
shared thing is already per test or per process: stores are a tmp_path file or a database with a
random name on the one test server (tests/conftest.py), servers bind a free port, HOME and the
working folder are per test (`_isolated`).

The hook is imported into tests/conftest.py.
"""

from __future__ import annotations

import pytest


def group_of(item: pytest.Item) -> str:
    """The xdist group a test runs in (the whole group on one worker)."""
    if item.get_closest_marker("ray") is not None:
        return "ray"
    if "llama_server" in getattr(item, "fixturenames", ()):
        return "llm"
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group_of(item)))
