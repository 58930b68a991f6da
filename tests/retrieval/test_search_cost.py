"""Issue 33 §6: what `math2 search` costs, checked without timing anything.

- Its start imports neither the store (SQLAlchemy), nor HTTP (httpx), nor the run engine or the
  model clients, nor Lean's term rules or the importer registry: a search without `--rerank`
  needs none.
- A query opens no file once the index is open, whatever k: names and snippets are read from
  files mapped once per process, so the cost per query does not grow with the hits shown.

Both run in a fresh interpreter (what a `math2` process imports; Python's audit events, which
report every file a process opens, without leaving a hook in the test session).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from math2.retrieval.index import build_index
from tests.retrieval.conftest import FIX

# the Lean term rules come with a check, not with the settings' limits (issue 45 §6)
HEAVY = (
    "sqlalchemy", "httpx", "alembic", "math2.runs", "math2.llm", "math2.store",
    "math2.lean.terms", "math2.importers.registry",
)  # fmt: skip

_CLI = """
import json, sys
from math2.cli import main

sys.argv = ["math2", *json.loads(sys.argv[1])]
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m.startswith(HEAVY))
with open(OUT, "w") as fh:
    json.dump({"code": code, "heavy": heavy}, fh)
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
    script = f"OUT = {str(out)!r}\nHEAVY = {HEAVY!r}\n" + _CLI
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
