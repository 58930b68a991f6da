"""The conformance group: tests over the real external data sets (data/external.yaml), marked
`@pytest.mark.data("set", …)`.

The real data is the folder `MATH2_DATA__DIR` names when pytest starts (scripts/test.sh sets it
where it fetched or was given the data; every test then runs with the MATH2_* variables cleared,
so nothing else reads it). A marked test runs when each set it names is there and checks against
the manifest's hashes; a set whose file differs fails the test with the file and both hashes.
Where a set is absent the test does not run — skipped, and the session's summary says so with
the reason — unless `MATH2_REQUIRE_DATA=1`, where it fails.

The hooks are imported into tests/conftest.py. Under pytest-xdist (scripts/test.sh) the tests run
in worker processes and the summary is written by the controller: what ran and what did not
travels in each setup report's `user_properties` and is counted where the reports arrive
(`pytest_runtest_logreport`, in the one process without xdist).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

REAL_DATA = os.environ.get("MATH2_DATA__DIR") or None
REQUIRE_DATA = os.environ.get("MATH2_REQUIRE_DATA") == "1"
MARKER = "data"

_not_run: dict[str, str] = {}  # test id -> why it did not run (from the reports)
_ran: list[str] = []  # test ids (from the reports)
_PROPERTY = "math2-conformance"  # the user property of a marked test: "" ran, else why not
_fails: dict[str, str] = {}  # test id -> why it fails (reported as the test's failure)


def real_folder(name: str) -> Path | None:
    """The real set's folder when `MATH2_DATA__DIR` holds it (unchecked: for listing files at
    collection; a marked test checks it before it runs), else None."""
    from math2.data import load_external

    if REAL_DATA is None:
        return None
    folder = Path(REAL_DATA) / load_external().get(name).folder
    return folder if folder.is_dir() else None


def cases(name: str, values: list, ids: list[str] | None = None, arity: int = 2) -> list:
    """Parameters over a real set's items, each marked with the set: with the set absent, one
    marked case that reports it (a parametrization never collects nothing)."""
    mark = pytest.mark.data(name)
    if not values:
        absent = (None,) * arity if arity > 1 else (None,)
        return [pytest.param(*absent, id=f"{name}-absent", marks=mark)]
    ids = ids or [str(v) for v in values]
    return [
        pytest.param(*(v if arity > 1 else (v,)), id=f"{name}-{i}", marks=mark)
        for v, i in zip(values, ids, strict=True)
    ]


@functools.cache
def _check(name: str) -> tuple[Path | None, str]:
    """The verified folder of a real set, or why there is none ("" with a folder)."""
    from math2.data import DataMismatch, DataMissing, UnknownDataSet, load_external, verify

    try:
        ds = load_external().get(name)
    except UnknownDataSet as exc:
        return None, f"FAIL {exc}"
    if REAL_DATA is None:
        return None, "MATH2_DATA__DIR is not set (scripts/test.sh fetches the data or is given it)"
    root = Path(REAL_DATA)
    if not (root / ds.folder).is_dir():
        return None, f"MATH2_DATA__DIR={root} holds no {ds.folder}/ ({name})"
    try:
        return verify(root, ds), ""
    except DataMismatch as exc:
        return None, f"FAIL {exc}"
    except DataMissing as exc:
        return None, str(exc)


def real_data(name: str) -> Path:
    """Inside a marked test: the verified folder of a real set."""
    folder, why = _check(name)
    if folder is None:
        pytest.fail(why.removeprefix("FAIL "))
    return folder


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    for name in marker.args:
        folder, why = _check(name)
        if folder is not None:
            continue
        if why.startswith("FAIL "):
            _fails[item.nodeid] = why.removeprefix("FAIL ")
            return
        if REQUIRE_DATA:
            _fails[item.nodeid] = f"MATH2_REQUIRE_DATA=1 but data set {name} is not here: {why}"
            return
        item.user_properties.append((_PROPERTY, why))
        pytest.skip(f"conformance (data set {name}) not run: {why}")
    item.user_properties.append((_PROPERTY, ""))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count a marked test's setup report (in the controller under xdist)."""
    if report.when != "setup":
        return
    for key, why in report.user_properties:
        if key != _PROPERTY:
            continue
        if why:
            _not_run[report.nodeid] = why
        else:
            _ran.append(report.nodeid)


def pytest_runtest_call(item: pytest.Item) -> None:
    """A marked test whose data is required and absent, or refused, fails (not errors)."""
    if item.nodeid in _fails:
        pytest.fail(_fails[item.nodeid])


def pytest_terminal_summary(terminalreporter) -> None:
    if not (_not_run or _ran):
        return
    tr = terminalreporter
    if _ran:
        tr.write_line(
            f"conformance group (real data, marker `data`): {len(_ran)} tests run on "
            f"MATH2_DATA__DIR={REAL_DATA}"
        )
    if _not_run:
        reasons = sorted(set(_not_run.values()))
        tr.write_line(
            f"conformance group (real data, marker `data`): {len(_not_run)} tests NOT RUN — "
            + "; ".join(reasons)
            + " (MATH2_REQUIRE_DATA=1 makes this a failure)"
        )
