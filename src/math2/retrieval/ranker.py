"""The learned ranker (issue 45 §3): LambdaMART (LightGBM) over the features of each
candidate of the first stage (`features.py`), trained on the dev sets shaped like users
(`devsets.py`) when `math2 index build` builds an index, and kept beside it as a versioned
artifact:

    <index>/ranker/model.txt     LightGBM's text model
    <index>/ranker/ranker.json   RANKER_VERSION, FEATURES, the digest of the index's
                                 meta.json and of model.txt, the queries it was trained on,
                                 the share of the first stage's order mixed in and
                                 which order (`mixed`, MIX, ORDER)

An index whose `meta.json` changed since (rebuilt, re-embedded), a math2 whose features differ,
a model file that is not the one recorded, or one whose header names other features than
FEATURES, is refused with the command that rebuilds it
(`RankerMismatch`): a model never reads features it was not trained on.

A search loads the model through LightGBM's C library (`_Booster`) rather than its Python
package, which imports pandas and scipy (0.45 s of CPU that `math2 search` cannot afford), and
only when a query has candidates to order (`Ranker.scores`). Opening an index checks the
artifact (`Ranker.load`) and that LightGBM's library is there, loading neither, and keeps the
bytes of model.txt it checked: the first query to order loads the model from them
(`LGBM_BoosterLoadModelFromString`), so a process that opened an index never reads a model
rebuilt in place since (`build_ranker`) unchecked. The index build trains with the Python
package.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from math2.errors import Math2Error
from math2.retrieval.features import FEATURES, RANK_MISSING, candidate_features
from math2.retrieval.stage import RANKER_POOL as POOL  # each part's top the ranker orders
from math2.retrieval.stage import RRF_K, Rankings, fuse

if TYPE_CHECKING:
    from math2.retrieval.devsets import DevItem
    from math2.retrieval.index import SearchIndex

RANKER_DIR = "ranker"
# bump with any change to what a feature or a score means (3: the name-part ranking counts one
# thing named two ways once, `nameparts.query_terms`, and the mix reads the strict order; 4: the
# name's cover of the query's words, `features.name_cover`, `name_extra`; 5: each part's top 200,
# a symbol's constant a namesake whatever one-letter variables surround it, more LaTeX read;
# 6: an operation's English words, `english.OPERATIONS`, and their pairs one thing each
# (rank46); a LaTeX query's words, namesakes and shapes read its notions, `latexnotions.py`
# (latex46); the fields of the concepts among the candidates join them, `owner_rank`,
# `dot_field`, `prefix_cover`: `fieldmap.py` (fields46))
RANKER_VERSION = 6
# A candidate's score is the model's, standardised over the query's candidates, plus MIX × the
# first stage's −log(1 + rank) (`mixed`): the model alone won on the concepts but fell a little
# short of the fusion on instances, natural sentences and the field queries; at 0.25 of the
# fusion's order it was above the fusion on every kind and style but the 2 field queries under
# grouped cross-validation on the dev sets (docs/benchmarks.md, issue 45 §3, branch rank45; 0,
# 0.25, 0.5 and 1 measured). Boosting from the fused rank instead (LightGBM's `init_score`) did
# worse at every scale. The order (ORDER, `first_ranks`) was the fusion's until branch
# quality45: a candidate only the name-part ranking found had no fused rank and lost 1.7
# standard deviations (`deriv_mul`, 1st there, 15th–18th over all of Mathlib); "strict" (the
# best of the fused, name-part and gloss ranks, a part's ties at their worst) puts it 1st and
# is not below the fusion's order beyond noise on any cut (structures 0.362 -> 0.411, BETTER;
# instances 0.570 -> 0.544, within noise); "best" and "rrf" measured beside it.
MIX = 0.25
ORDERS = ("fused", "best", "strict", "rrf")
ORDER = "strict"
MIN_QUERIES = 50  # fewer dev-set queries with an answer in the index: no ranker is built
# LambdaMART's settings: small trees, few rounds — ~1,000 training queries.
PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [10],
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "lambdarank_truncation_level": 20,
    "num_threads": 1,
    "deterministic": True,
    "seed": 0,
    "verbose": -1,
}
ROUNDS = 200
LIGHTGBM = "lightgbm"  # the package whose C library (lib/lib_lightgbm.*) reads the model


def mixed(raw: np.ndarray, rows: np.ndarray, mix: float = MIX, order: str = ORDER) -> np.ndarray:
    """The model's scores of one query's candidates (`raw`), standardised, plus `mix` × the
    first stage's order (−log(1 + rank), the rank `first_ranks` gives by `order`)."""
    spread = float(raw.std())
    z = (raw - raw.mean()) / spread if spread > 0 else np.zeros_like(raw)
    out: np.ndarray = z - mix * np.log1p(first_ranks(rows, order))
    return out


def first_ranks(rows: np.ndarray, order: str = ORDER) -> np.ndarray:
    """Each candidate's rank in the first stage's order that the mix reads (`ORDERS`):
    `fused` the fusion's rank (the name-part and gloss rankings not in it); `best` the best of
    the fused, name-part and gloss ranks (a part that ranks a candidate near the top is not
    overruled by the parts that do not rank it at all); `rrf` the rank of the fusion's score
    with the name-part and gloss rankings' reciprocal ranks added at weight 1."""
    fused = rows[:, _COL["fused_rank"]]
    if order == "fused":
        return fused
    parts, glosses = rows[:, _COL["parts_rank"]], rows[:, _COL["gloss_rank"]]
    if order == "best":
        out: np.ndarray = np.minimum(fused, np.minimum(parts, glosses))
        return out
    if order == "strict":
        parts = _last_of_ties(rows[:, _COL["parts_score"]], parts)
        glosses = _last_of_ties(rows[:, _COL["gloss_score"]], glosses)
        strict: np.ndarray = np.minimum(fused, np.minimum(parts, glosses))
        return strict
    if order == "rrf":
        score = rows[:, _COL["fused"]].copy()
        for ranks in (parts, glosses):
            score += np.where(ranks < RANK_MISSING, 1.0 / (RRF_K + ranks + 1), 0.0)
        v = -score
        ordered = np.sort(v)
        ranks_out: np.ndarray = np.searchsorted(ordered, v, side="left").astype(np.float64)
        return ranks_out
    raise ValueError(f"unknown first-stage order {order!r}: one of {ORDERS}")


def _last_of_ties(score: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """A part's ranks with ties at the worst of their ranks: how many of the part's top (every
    one a candidate) score at least as much, less one. A name that only shares a score with a
    hundred others is not near the top of that part."""
    ranked = ranks < RANK_MISSING
    top = np.sort(score[ranked])
    worst = len(top) - np.searchsorted(top, score, side="left") - 1
    out: np.ndarray = np.where(ranked, worst, RANK_MISSING).astype(np.float64)
    return out


_COL = {f: i for i, f in enumerate(FEATURES)}


class RankerMismatch(Math2Error, ValueError):
    """A ranker artifact that is not this index's or this math2's."""


class RankerMissing(Math2Error, ValueError):
    """The learned ranker asked for where the index has none."""


class RowsMismatch(Math2Error, ValueError):
    """Feature rows trained on under names that are not the ones they were made with."""


def index_digest(folder: Path) -> str:
    return hashlib.sha256((folder / "meta.json").read_bytes()).hexdigest()


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lightgbm_library() -> Path:
    """Where LightGBM's C library is, found without importing or loading it (`Ranker.load`
    checks it at open, so a missing LightGBM is an error there and not at the first query)."""
    spec = importlib.util.find_spec(LIGHTGBM)
    if spec is None or not spec.submodule_search_locations:
        raise RankerMissing(f"the learned ranker needs LightGBM: pip install {LIGHTGBM}")
    base = Path(next(iter(spec.submodule_search_locations)))
    lib = next((p for p in (base / "lib").glob("lib_lightgbm.*")), None)
    if lib is None:
        raise RankerMissing(f"LightGBM's library is missing under {base / 'lib'}")
    return lib


def _model_features(model: bytes) -> list[str] | None:
    """The feature names LightGBM wrote in a model's header (`feature_names=`): the columns the
    model was trained on, which its C API does not check at predict time."""
    at = model.find(b"\nfeature_names=")
    if at < 0:
        return None
    line = model[at + 1 : model.find(b"\n", at + 1)]
    return line.partition(b"=")[2].decode().split()


class _Booster:
    """A LightGBM model read by LightGBM's own C library (its C API, through ctypes) from the
    model's text: the bytes `Ranker.load` checked, never the file again."""

    def __init__(self, lib: Path, model: bytes):
        self._lib = ctypes.cdll.LoadLibrary(str(lib))
        self._lib.LGBM_GetLastError.restype = ctypes.c_char_p
        self._handle = ctypes.c_void_p()
        rounds = ctypes.c_int(0)
        self._check(self._lib.LGBM_BoosterLoadModelFromString(
            ctypes.c_char_p(model), ctypes.byref(rounds), ctypes.byref(self._handle)
        ))  # fmt: skip

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise RankerMismatch(f"LightGBM: {self._lib.LGBM_GetLastError().decode()}")

    def predict(self, rows: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(rows, dtype=np.float64)
        out = np.zeros(len(data), dtype=np.float64)
        n = ctypes.c_int64(0)
        self._check(self._lib.LGBM_BoosterPredictForMat(
            self._handle, data.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(1),
            ctypes.c_int32(data.shape[0]), ctypes.c_int32(data.shape[1]), ctypes.c_int(1),
            ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_char_p(b"num_threads=1"),
            ctypes.byref(n), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        ))  # fmt: skip
        return out

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._lib.LGBM_BoosterFree(self._handle)


class Ranker:
    """A verified ranker artifact of one index: `scores` orders a query's candidates."""

    def __init__(self, folder: Path, info: dict[str, Any], model: bytes, lib: Path):
        self.folder = folder
        self.info = info
        self._model = model  # model.txt as it was when its digest was checked
        self._lib = lib
        self.mix = float(info.get("mix", MIX))
        self.order = str(info.get("order", ORDER))

    @cached_property
    def _booster(self) -> _Booster:
        """LightGBM's library and the model, loaded by the first query that needs them: the
        model from the bytes `load` checked (a rebuild since, `build_ranker`, is not read)."""
        return _Booster(self._lib, self._model)

    @classmethod
    def load(cls, folder: Path, meta: dict[str, Any]) -> Ranker | None:
        """The ranker beside the index at `folder` (None where none was built), checked."""
        here = folder / RANKER_DIR
        if not (here / "ranker.json").exists():
            return None
        rebuild = f"`math2 index build --library {meta.get('source', 'mathlib')}`"
        try:
            info = json.loads((here / "ranker.json").read_text())
        except (OSError, ValueError) as exc:
            raise RankerMismatch(f"{here / 'ranker.json'}: unreadable ({exc}): rebuild it "
                                 f"with {rebuild}") from None  # fmt: skip
        try:
            model = (here / "model.txt").read_bytes()
        except OSError:
            model = None
        why = None
        if info.get("version") != RANKER_VERSION or info.get("features") != list(FEATURES):
            why = (f"its features are version {info.get('version')}, this math2 reads version "
                   f"{RANKER_VERSION}")  # fmt: skip
        elif info.get("pool") != POOL:
            why = (f"it was trained on each part's top {info.get('pool')}, this math2 orders "
                   f"the top {POOL}")  # fmt: skip
        elif info.get("index") != index_digest(folder):
            why = "the index was rebuilt or changed after it was trained"
        elif model is None or info.get("model") != hashlib.sha256(model).hexdigest():
            why = "its model.txt is not the one it recorded"
        elif _model_features(model) != list(FEATURES):
            why = "its model.txt was trained on other features than the ones it records"
        if why:
            raise RankerMismatch(f"the learned ranker at {here} does not match its index "
                                 f"({why}): rebuild both with {rebuild}")  # fmt: skip
        assert model is not None
        return cls(folder, info, model, _lightgbm_library())

    def scores(
        self, ix: SearchIndex, query: str, r: Rankings, fused: dict[int, float]
    ) -> dict[int, float]:
        """The model's score of every candidate of the first stage, as exp(s − best): in
        (0, 1], the best 1, so that a score relative to its library's best means what it means
        for the fusion's (`scope.search_libraries` merges libraries by it)."""
        cands, rows = candidate_features(ix, query, r, fused)
        if len(cands) == 0:
            return {}
        s = mixed(self._booster.predict(rows), rows, self.mix, self.order)
        return dict(zip(cands.tolist(), np.exp(s - s.max()).tolist(), strict=True))


@dataclass
class QueryRows:
    """One dev query's candidates, their feature rows and labels (1: an answer)."""

    item: DevItem
    positions: np.ndarray
    rows: np.ndarray
    labels: np.ndarray
    fused: dict[int, float]


def query_rows(ix: SearchIndex, items: Sequence[DevItem], pool: int = POOL) -> list[QueryRows]:
    """Each item's first stage, as the search runs it, with its features and labels."""
    from math2.retrieval.index import W_DENSE

    out = []
    weights = ix.fusion_weights(0.0, W_DENSE)
    for start in range(0, len(items), 64):
        chunk = items[start : start + 64]
        for it, r in zip(chunk, ix.rankings([i.query for i in chunk], pool, terms=True),
                         strict=True):  # fmt: skip
            fused = fuse(r, weights, ix.prior)
            cands, rows = candidate_features(ix, it.query, r, fused)
            labels = np.array([ix.name(p) in it.answers for p in cands.tolist()], dtype=float)
            out.append(QueryRows(it, cands, rows, labels, fused))
    return out


def fit(
    data: Sequence[QueryRows],
    rounds: int = ROUNDS,
    params: dict[str, Any] | None = None,
    features: Sequence[str] = FEATURES,
) -> Any:
    """A LambdaMART model over the queries that have an answer among their candidates, its
    columns named `features` (rows an older math2 made are trained on only with the names that
    math2 recorded with them: benchmarks); rows of another width are refused (`RowsMismatch`)."""
    import lightgbm

    kept = [d for d in data if d.labels.any()]
    wrong = {d.rows.shape[-1] for d in kept if d.rows.ndim != 2 or d.rows.shape[1] != len(features)}
    if wrong:
        raise RowsMismatch(f"feature rows of width {sorted(wrong)} given for {len(features)} "
                           f"features ({', '.join(features)})")  # fmt: skip
    x = np.concatenate([d.rows for d in kept])
    y = np.concatenate([d.labels for d in kept])
    train = lightgbm.Dataset(x, y, group=[len(d.labels) for d in kept],
                             feature_name=list(features), free_raw_data=True)  # fmt: skip
    return lightgbm.train(params or PARAMS, train, num_boost_round=rounds)


def predict(model: Any, rows: np.ndarray, mix: float = MIX) -> np.ndarray:
    """A trained model's scores of one query's candidates, mixed with the first stage's order."""
    return mixed(model.predict(rows), rows, mix)


def build_ranker(
    ix: SearchIndex,
    items: Sequence[DevItem],
    say: Callable[[str], None],
    min_queries: int | None = None,
) -> dict[str, Any] | None:
    """Train the ranker on `items` over the index `ix` and write its artifact beside it
    (removing an older one first); None, and no artifact, where too few items are answered."""
    here = ix.folder / RANKER_DIR
    shutil.rmtree(here, ignore_errors=True)
    min_queries = MIN_QUERIES if min_queries is None else min_queries
    if len(items) < min_queries:
        say(f"ranker: not built ({len(items)} dev-set queries with an answer in this index, "
            f"{min_queries} needed); searches use the fusion")  # fmt: skip
        return None
    data = query_rows(ix, items)
    model = fit(data)
    here.mkdir(parents=True)
    model.save_model(str(here / "model.txt"))
    styles: dict[str, int] = {}
    for it in items:
        styles[it.style] = styles.get(it.style, 0) + 1
    info = {
        "version": RANKER_VERSION,
        "features": list(FEATURES),
        "index": index_digest(ix.folder),
        "model": _file_digest(here / "model.txt"),
        "queries": styles,
        "rounds": ROUNDS,
        "mix": MIX,
        "order": ORDER,
        "pool": POOL,  # the first stage's width its rows were made at
    }
    (here / "ranker.json").write_text(json.dumps(info, indent=1))
    say(f"ranker: LambdaMART trained on {len(items)} dev-set queries "
        f"({sum(d.labels.any() for d in data)} with an answer among the candidates)")  # fmt: skip
    return info
