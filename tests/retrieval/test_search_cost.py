"""Issue 33 §6: what `math2 search` costs, checked without timing anything.

- Its start imports neither the store (SQLAlchemy), nor HTTP (httpx), nor the run engine or the
  model clients, nor Lean's term rules or the importer registry: a search without `--rerank`
  needs none.
- A query opens no file once the index is open, whatever k: names and snippets are read from
  files mapped once per process, so the cost per query does not grow with the hits shown.

- The learned ranker (issue 45 §6) costs only the searches it orders: `--version`, `search
  --help` and `search --fusion` import neither the ranker nor its features, and LightGBM's
  library is loaded (through ctypes, never its Python package with pandas and scipy) only by a
  query that has candidates to order.

They run in a fresh interpreter (what a `math2` process imports, and which shared libraries
it maps, read from /proc/self/maps; Python's audit events, which report every file a process
opens, without leaving a hook in the test session).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from math2.retrieval import ranker as ranker_mod
from math2.retrieval.index import build_index
from tests.retrieval.conftest import FIX, library_store

SEARCHPROJ = Path(__file__).resolve().parents[1] / "fixtures" / "searchproj"

# the Lean term rules come with a check, not with the settings' limits (issue 45 §6)
HEAVY = (
    "sqlalchemy", "httpx", "alembic", "math2.runs", "math2.llm", "math2.store",
    "math2.lean.terms", "math2.importers.registry", "lightgbm", "pandas", "scipy",
    "numpy.ma",  # numpy 2's np.unique imports it: 0.01 s (stage.Rankings.candidates)
)  # fmt: skip
# what only a search the learned ranker orders needs
RANKER = ("math2.retrieval.ranker", "math2.retrieval.features")

_CLI = """
import json, sys
from math2.cli import main

sys.argv = ["math2", *json.loads(sys.argv[1])]
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
ranker = sorted(m for m in sys.modules if m in RANKER)
try:
    with open("/proc/self/maps") as fh:
        lightgbm = "lib_lightgbm" in fh.read()
except OSError:
    lightgbm = None
import gc
with open(OUT, "w") as fh:
    json.dump({"code": code, "heavy": heavy, "ranker": ranker, "lightgbm": lightgbm,
               "gc": gc.isenabled()}, fh)
"""

_OPENS = """
import json, sys
from pathlib import Path
from math2.retrieval import Searcher

searcher = Searcher(Path(sys.argv[1]))
searcher.search("identity", "mathlib", 1)  # the first query opens the index's parts
events = []
counting = False

def hook(event, args):
    if counting and event in ("open", "mmap.__new__"):
        events.append(event)

sys.addaudithook(hook)
out = {}
for k in (1, 5, 100):
    events.clear()
    counting = True
    hits = searcher.search("identity function two equals one plus one", "mathlib", k)
    counting = False
    out[k] = {"hits": len(hits), "opened": len(events), "statements": [h.statement for h in hits]}
print(json.dumps(out))
"""


def _env(index: Path) -> dict[str, str]:
    return os.environ | {
        "MATH2_RETRIEVAL__INDEX_DIR": str(index),
        "MATH2_CONFIG": str(index / "absent.toml"),
        "COLUMNS": "200",
    }


def _run_cli(args: list[str], index: Path, tmp_path: Path) -> dict:
    out = tmp_path / "modules.json"
    script = f"OUT = {str(out)!r}\nHEAVY = {HEAVY!r}\nRANKER = {RANKER!r}\n" + _CLI
    res = subprocess.run(
        [sys.executable, "-c", script, json.dumps(args)],
        env=_env(index), cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.exists(), res.stderr
    return json.loads(out.read_text()) | {"stdout": res.stdout, "stderr": res.stderr}


def test_math2_search_imports_no_store_http_or_run_engine(store, tmp_path) -> None:
    index = tmp_path / "index"
    build_index(store, index / "mathlib", "mathlib", mathlib_dir=FIX)
    res = _run_cli(["search", "identity function", "-k", "3"], index, tmp_path)
    assert res["code"] == 0, res["stderr"]
    assert " 1. " in res["stdout"]  # it searched and printed hits
    assert res["heavy"] == [], res["heavy"]
    # the check sees them where they are imported: a command that opens the store
    other = _run_cli(["report"], index, tmp_path)
    assert "sqlalchemy" in other["heavy"] and "math2.store" in other["heavy"]
    # a search, however its command line starts, runs without the cyclic garbage collector's
    # passes (0.04-0.05 s of its CPU); another command keeps it
    assert res["gc"] is False and other["gc"] is True
    assert _run_cli(["--db", "sqlite://", "search", "identity"], index, tmp_path)["gc"] is False


def test_a_search_opens_no_part_it_weighs_zero(store, tmp_path) -> None:
    """The parents' docstrings weigh 0 by default: their part is never opened."""
    from math2.retrieval.index import SearchIndex

    build_index(store, tmp_path / "mathlib", "mathlib", mathlib_dir=FIX)
    ix = SearchIndex(tmp_path / "mathlib", parents_weight=0.0)
    assert ix.search("identity function")
    assert "parents" not in ix.__dict__ and "aids" in ix.__dict__
    weighted = SearchIndex(tmp_path / "mathlib", parents_weight=0.1)
    weighted.search("identity function")
    assert "parents" in weighted.__dict__


def test_a_query_opens_no_file_whatever_k(store, tmp_path) -> None:
    index = tmp_path / "index"
    build_index(store, index / "mathlib", "mathlib", mathlib_dir=FIX)
    res = subprocess.run(
        [sys.executable, "-c", _OPENS, str(index)],
        env=_env(index), cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    runs = {int(k): v for k, v in json.loads(res.stdout).items()}
    assert runs[1]["hits"] == 1 and runs[100]["hits"] > runs[5]["hits"] >= 5
    assert all(s for r in runs.values() for s in r["statements"])  # each hit has its snippet
    assert [r["opened"] for r in runs.values()] == [0, 0, 0]


@pytest.fixture(scope="module")
def ranked(tmp_path_factory) -> Path:
    """An index folder whose Mathlib index has a learned ranker (the fixture's dev sets)."""
    folder = tmp_path_factory.mktemp("ranked")
    store = library_store(folder, SEARCHPROJ)
    mp = pytest.MonkeyPatch()
    mp.setattr(ranker_mod, "MIN_QUERIES", 20)  # the fixture's sets hold 44 queries
    try:
        meta = build_index(store, folder / "index" / "mathlib", "mathlib",
                           mathlib_dir=SEARCHPROJ, ranker_sets=SEARCHPROJ / "devsets")  # fmt: skip
    finally:
        mp.undo()
    assert meta.get("ranker")
    return folder / "index"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
@pytest.mark.parametrize(
    ("args", "ranker", "lightgbm"),
    [
        (["--version"], [], False),
        (["search", "--help"], [], False),
        (["search", "group homomorphism", "--fusion"], [], False),
        # the default: the artifact is checked at open, LightGBM loads for a query to order
        (["search", "group homomorphism"], sorted(RANKER), True),
        (["search", "qqqxyz wwwzzz"], sorted(RANKER), False),  # no candidate: nothing to order
    ],
)
def test_lightgbm_is_loaded_only_by_a_search_it_orders(
    ranked: Path, tmp_path: Path, args: list[str], ranker: list[str], lightgbm: bool
) -> None:
    res = _run_cli(args, ranked, tmp_path)
    assert res["code"] == 0, res["stderr"]
    assert res["heavy"] == [], res["heavy"]  # never LightGBM's Python package, pandas, scipy
    assert res["ranker"] == ranker
    assert res["lightgbm"] is lightgbm
