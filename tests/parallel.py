"""What the suite needs to run on several pytest-xdist workers (scripts/test.sh: `-n 2 --dist
loadfile`): the groups of tests that one worker runs, each group whole.

* `ray`: the modules of the tests marked `ray` — each starts a Ray cluster of its own (one of
  three nodes); two at once on two cores starve each other's heartbeats and lose nodes, so one
  worker runs them, one module after another.
* `llm`: the modules using the session's `llama_server` — one llama.cpp server with SmolLM2 for
  them all, not one per worker (each holds a core while it answers).
* otherwise the test's module (xdist's `loadfile`): a module-scoped fixture (an imported library,
  a started browser) is made once, not once per worker that gets one of its tests.

xdist's scheduler sees test ids only, and its `xdist_group` marker does not reach them under
pytest 9 (xdist 3.8 suffixes `Item._nodeid`, which pytest 9 no longer reads), so the groups are
named here by file, and every collection checks them against the tests' markers and fixtures: a
`ray` test or a `llama_server` user in a module not listed below stops the run, naming it.

Every other shared thing is already per test or per process: stores are a tmp_path file or a
database with a random name on the one test server (tests/conftest.py), servers bind a free
port, HOME and the working folder are per test (`_isolated`).

The hooks are imported into tests/conftest.py.
"""

from __future__ import annotations

import pytest

GROUPS: dict[str, tuple[str, ...]] = {
    "ray": (
        "tests/runs/test_ray.py",
        "tests/runs/test_ray_faults.py",
        "tests/runs/test_ray_nodes.py",
        "tests/runs/test_roles_on_ray.py",
    ),
    "llm": (
        "tests/eval/test_llama_eval.py",
        "tests/llm/test_llama.py",
        "tests/retrieval/test_llama_rerank.py",
        "tests/roles/formalize/test_llama_fate16.py",
        "tests/roles/formalize/test_llama_loop.py",
        "tests/roles/informalize/test_llama_informalize.py",
    ),
}
_GROUP_OF_FILE = {path: name for name, paths in GROUPS.items() for path in paths}


def group_of_file(nodeid: str) -> str:
    """The work unit a test id belongs to: its group's name, else its module."""
    path = nodeid.split("::", 1)[0]
    return _GROUP_OF_FILE.get(path, path)


def group_needed(item: pytest.Item) -> str | None:
    """The group a test must run in, from its marker and fixtures (None: any)."""
    if item.get_closest_marker("ray") is not None:
        return "ray"
    if "llama_server" in getattr(item, "fixturenames", ()):
        return "llm"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needed = group_needed(item)
        if needed is not None and group_of_file(item.nodeid) != needed:
            path = item.nodeid.split("::", 1)[0]
            raise pytest.UsageError(
                f"{path}: its test {item.name} needs the xdist group {needed!r}; add the file to "
                f"GROUPS[{needed!r}] in tests/parallel.py"
            )


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """`--dist loadfile` with the groups above as work units (xdist's own hook returns plain
    `loadfile`; this one is asked first)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of_file(nodeid)

    return GroupScheduling(config, log)
