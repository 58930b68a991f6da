"""Feature rows are trained on only under the names they were made with: `ranker.fit` refuses
rows of another width, and the benchmark's rows files (`benchmarks/ranker_rows.py`, read by
`benchmarks/retrieval_ranker.py --cache`, `--baseline-rows`) record their math2's feature names
and are refused in one line naming the file where those are not this math2's (review 1, M2)."""

import importlib.util
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from math2.retrieval import ranker as ranker_mod
from math2.retrieval.devsets import DevItem, read_devsets
from math2.retrieval.features import FEATURES
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.ranker import QueryRows, RowsMismatch, fit, query_rows
from tests.conftest import REPO
from tests.retrieval.conftest import library_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "searchproj"
OLD = FEATURES[:-2]  # an older math2's features: this one's less the last two

_spec = importlib.util.spec_from_file_location(
    "ranker_rows", REPO / "benchmarks" / "ranker_rows.py"
)
ranker_rows = importlib.util.module_from_spec(_spec)
sys.modules["ranker_rows"] = ranker_rows  # a dataclass reads its module
_spec.loader.exec_module(ranker_rows)


def _rows(width: int, n: int = 30) -> list[QueryRows]:
    rng = np.random.default_rng(0)
    out = []
    for q in range(n):
        labels = np.zeros(8)
        labels[q % 8] = 1.0
        item = DevItem("probe", f"query {q}", frozenset({f"a{q}"}), "theorem")
        out.append(QueryRows(item, np.arange(8), rng.random((8, width)), labels, {}))
    return out


def test_rows_are_trained_on_only_under_the_names_they_were_made_with() -> None:
    data = _rows(len(OLD))
    with pytest.raises(RowsMismatch, match="width"):
        fit(data, rounds=2)  # an older math2's rows under this math2's names
    model = fit(data, rounds=2, features=OLD)
    assert model.feature_name() == list(OLD)
    with pytest.raises(RowsMismatch):
        fit(data, rounds=2, features=FEATURES[:-1])


def test_a_rows_file_is_read_back_only_as_the_features_it_records(tmp_path) -> None:
    data = _rows(len(OLD), 3)
    queries = [d.item.query for d in data]
    path = tmp_path / "old.pkl"
    ranker_rows.save_rows(path, data, OLD, 3)
    with pytest.raises(ranker_rows.RowsFileError, match=f"{path}.*{FEATURES[-2]}, {FEATURES[-1]}"):
        ranker_rows.load_rows(path, queries)  # as a --cache: not this math2's rows
    old = ranker_rows.load_rows(path, queries, prefix=True)  # as --baseline-rows
    assert (old.version, old.features, len(old.rows)) == (3, OLD, 3)
    with pytest.raises(ranker_rows.RowsFileError, match="other dev-set queries"):
        ranker_rows.load_rows(path, queries[:2], prefix=True)
    ranker_rows.save_rows(path, data, (*OLD[1:], OLD[0]), 3)  # not a prefix
    with pytest.raises(ranker_rows.RowsFileError, match="not a prefix"):
        ranker_rows.load_rows(path, queries, prefix=True)
    ranker_rows.save_rows(path, data, FEATURES, 4)  # names that do not fit the rows
    with pytest.raises(ranker_rows.RowsFileError, match="width"):
        ranker_rows.load_rows(path, queries)
    path.write_bytes(pickle.dumps(data))  # a cache of before the names were recorded
    with pytest.raises(ranker_rows.RowsFileError, match="without the feature names"):
        ranker_rows.load_rows(path, queries)


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("rows")
    mp = pytest.MonkeyPatch()
    mp.setattr(ranker_mod, "MIN_QUERIES", 20)  # the fixture's sets hold 38 queries
    try:
        _build(folder)
    finally:
        mp.undo()
    return folder / "index"


def _build(folder: Path) -> None:
    build_index(library_store(folder, FIX), folder / "index", "mathlib", mathlib_dir=FIX,
                ranker_sets=FIX / "devsets")  # fmt: skip


def _benchmark(index: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "retrieval_ranker.py"), "--index", str(index),
         "--sets", str(FIX / "devsets"), "--folds", "2", "--no-latency", "--no-fusion-variants",
         "--mixes", "0.25:strict", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_the_benchmark_scores_older_rows_only_as_a_baseline(index, tmp_path) -> None:
    """An older math2's rows as `--cache` (this math2's figures) are one line naming the file,
    not a traceback, and no ablation runs on them; as `--baseline-rows` they are trained
    under their own names and labelled with their version."""
    ix = SearchIndex(index, use_ranker=False)
    items = read_devsets(FIX / "devsets", {n: ix.cards[i].kind for i, n in enumerate(ix.names)})
    data = query_rows(ix, items)
    old = [QueryRows(d.item, d.positions, d.rows[:, : len(OLD)], d.labels, d.fused) for d in data]
    path = tmp_path / "rows_old.pkl"
    ranker_rows.save_rows(path, old, OLD, 3)
    refused = _benchmark(index, "--cache", str(path))
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert refused.stderr.strip().startswith(f"retrieval_ranker: {path}: rows of RANKER_VERSION 3")
    assert len(refused.stderr.strip().splitlines()) == 1
    ran = _benchmark(index, "--baseline-rows", str(path), "--baseline", "0.25:strict",
                     "--no-ablations")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "(baseline, rows_old.pkl, RANKER_VERSION 3)" in ran.stdout


def test_a_model_trained_on_other_features_is_refused_at_open(index, tmp_path) -> None:
    """LightGBM's C API does not check a row's width at predict time: the model's own header
    (`feature_names=`) is held against FEATURES when the index opens, even where ranker.json
    and the model's digest agree."""
    import hashlib
    import json
    import shutil

    folder = tmp_path / "index"
    shutil.copytree(index, folder)
    here = folder / ranker_mod.RANKER_DIR
    assert SearchIndex(folder, use_ranker=True).learned is not None
    text = (here / "model.txt").read_bytes()
    names = f"feature_names={' '.join(FEATURES)}\n".encode()
    assert names in text
    text = text.replace(names, f"feature_names={' '.join(OLD)}\n".encode())
    (here / "model.txt").write_bytes(text)
    info = json.loads((here / "ranker.json").read_text())
    info["model"] = hashlib.sha256(text).hexdigest()
    (here / "ranker.json").write_text(json.dumps(info))
    with pytest.raises(ranker_mod.RankerMismatch, match="other features"):
        SearchIndex(folder, use_ranker=True)
