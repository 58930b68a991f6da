"""Issue 45 §6 (branch cost45b): what the query path computes more cheaply is what it computed
before — the name-word columns in one pass over the candidates, the hits built without
`model_construct`'s per-field lookups, the snippets read at once — and `math2 search` ends
without the interpreter's teardown only where nothing is lost by it."""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, Field

import math2
from math2.retrieval import lexical
from math2.retrieval.cards import Card
from math2.retrieval.features import FEATURES, NAME_COLUMNS, _name_columns, candidate_features
from math2.retrieval.index import Hit, SearchIndex, build_index
from math2.retrieval.nameparts import FAMILIES, document_parts, query_groups, query_weights
from math2.retrieval.searcher import SearchHit
from math2.retrieval.text import tokens
from math2.util.construct import construct
from tests.retrieval.conftest import library_store
from tests.retrieval.test_ranker import FIX


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> SearchIndex:
    folder = tmp_path_factory.mktemp("cost")
    build_index(library_store(folder, FIX), folder / "index", "mathlib", mathlib_dir=FIX)
    return SearchIndex(folder / "index", use_ranker=False)


def separate_passes(
    ix: Any, query: str, weights: dict[str, float], names: list[str], cands: np.ndarray
) -> dict[str, np.ndarray]:
    """The name-word columns as 5d70a65 computed them: `Lexical.matched` once per word list
    (the query's words, the mapped ones, their weights, each group), each name read twice."""
    n, parts, mapped = len(cands), ix.levers.parts, list(weights)
    cols = {f: np.zeros(n) for f in NAME_COLUMNS}
    wanted = list(dict.fromkeys([*ix._query_tokens(query), *mapped]))
    if parts is not None and wanted and n:
        hits = parts.matched(wanted, cands)
        own = np.ones(n)
        for j in np.flatnonzero(hits > 0).tolist():
            own[j] = max(1, len(document_parts(names[j])))
        cols["name_cover"] = hits / len(wanted)
        cols["name_extra"] = np.maximum(0.0, own - hits) / own
    if mapped and parts is not None:
        hits = parts.matched(mapped, cands)
        cols["parts_coverage"] = hits / len(mapped)
        for j, name in enumerate(names):
            if hits[j] > 0 or "|" in name or "∣" in name:
                cols["parts_precision"][j] = hits[j] / max(1, len(document_parts(name)))
                ws = document_parts(name.rsplit(".", 1)[-1])
                cols["parts_last"][j] = sum(w in set(mapped) for w in ws) / max(1, len(ws))
        cols["parts_reliable"] = parts.matched(weights, cands) / sum(weights.values())
        groups = query_groups(query, ix.levers.vocabulary_weights, ix.families)
        said = np.zeros(n)
        for g in groups:
            said += parts.matched(g, cands) > 0
        cols["parts_groups"] = said / max(1, len(groups))
    return cols


@pytest.mark.parametrize(
    "query",
    ["derivative of a product of two functions", "group homomorphism", "the product of two "
     "multiplicative functions", r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$", "mul_comm",
     "|x| ≤ 1", "a ∣ b → a ∣ b * c", "zzzz"],
)  # fmt: skip
def test_the_name_word_columns_are_those_of_the_separate_passes(index, query) -> None:
    (r,) = index.rankings([query], terms=True)
    cands, rows = candidate_features(index, query, r, {})
    weights = query_weights(query, index.levers.vocabulary_weights, index.families)
    want = separate_passes(index, query, weights, index.names_at(cands), cands)
    col = {f: i for i, f in enumerate(FEATURES)}
    for f in NAME_COLUMNS:
        got = np.ascontiguousarray(rows[:, col[f]])
        assert got.tobytes() == want[f].astype(np.float64).tobytes(), (query, f)


def test_a_name_with_two_words_of_one_group_says_it_once(tmp_path) -> None:
    """A name part index of names of our own: `Finset.prod_mul_distrib` has both words of
    "product" (`prod`, `mul`), which the group counts once (the fixture has no such name)."""
    names = ["Finset.prod_mul_distrib", "deriv_mul", "Nat.prod_pow", "mul_comm", "zero_add",
             "HasDerivAt.mul", "Real.exp_log"]  # fmt: skip
    lexical.build([list(document_parts(n)) for n in names], tmp_path / "parts")
    ix = SimpleNamespace(
        levers=SimpleNamespace(parts=lexical.Lexical(tmp_path / "parts"), vocabulary_weights=None),
        families=FAMILIES, _query_tokens=lambda q: tokens(q, True, True),
    )  # fmt: skip
    cands = np.arange(len(names))
    for query in ["derivative of a product of two functions", "product of exponentials",
                  "the product of two multiplicative functions", "zzzz"]:  # fmt: skip
        weights = query_weights(query, None, FAMILIES)
        got = _name_columns(ix, query, weights, names, cands)  # type: ignore[arg-type]
        want = separate_passes(ix, query, weights, names, cands)
        for f in NAME_COLUMNS:
            assert got[f].tobytes() == want[f].tobytes(), (query, f)
    assert got["parts_groups"].tolist() == [0.0] * len(names)  # "zzzz": nothing asked
    query = "derivative of a product of two functions"
    got = _name_columns(ix, query, query_weights(query, None, FAMILIES), names, cands)  # type: ignore[arg-type]
    assert got["parts_groups"][0] == 0.5 and got["parts_groups"][1] == 1.0


def test_the_columns_say_something_on_the_fixture(index) -> None:
    """The check above compares columns that are not all zero (a fixture that matched no name
    word would compare nothing)."""
    said = set()
    for query in ["derivative of a product of two functions", "a ∣ b → a ∣ b * c"]:
        (r,) = index.rankings([query], terms=True)
        _, rows = candidate_features(index, query, r, {})
        said |= {f for f in NAME_COLUMNS if rows[:, FEATURES.index(f)].any()}
    assert said == set(NAME_COLUMNS)


def _same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b) and a == b and repr(a) == repr(b)
    assert list(a.__dict__) == list(b.__dict__) and a.__dict__ == b.__dict__
    assert a.model_fields_set == b.model_fields_set and a.model_dump() == b.model_dump()
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__


def test_construct_builds_model_constructs_instance() -> None:
    hit = {"renamed_from": None, "mention_id": 7, "name": "deriv_mul", "score": 0.5,
           "position": 3, "bm25_rank": 1, "dense_rank": None, "prior": 0.25}  # fmt: skip
    fast, slow = construct(Hit, dict(hit)), Hit.model_construct(**hit)
    _same(fast, slow)
    fast.bm25_rank = 2  # each instance has its own set of fields set
    assert Hit.model_construct(**hit).model_fields_set == slow.model_fields_set
    found = {"library": "mathlib", "hit": slow, "score": 1.5, "statement": "a = a",
             "card": Card(kind="theorem"), "declaration": None, "node": None,
             "informal": None}  # fmt: skip
    _same(construct(SearchHit, dict(found)), SearchHit.model_construct(**found))


class _Aliased(BaseModel):
    x: int = Field(0, alias="y")
    z: int = 1


def test_construct_leaves_what_it_does_not_cover_to_model_construct() -> None:
    _same(construct(_Aliased, {"y": 2, "z": 3}), _Aliased.model_construct(y=2, z=3))
    short = {"mention_id": 7, "name": "a", "score": 0.5}  # defaults filled by pydantic
    _same(construct(Hit, dict(short)), Hit.model_construct(**short))
    other = {**short, "position": 1, "bm25_rank": 1, "dense_rank": 1, "prior": 0.0, "x": 1}
    _same(construct(Hit, dict(other)), Hit.model_construct(**other))


def test_the_snippets_read_at_once_are_those_read_one_by_one(index) -> None:
    at = [5, 0, 17, 5, len(index) - 1]
    assert index.snippets(at) == [index.snippet(p) for p in at] and any(index.snippets(at))
    assert index.snippets([]) == []


# a handler the interpreter's teardown runs, registered before math2 starts (`sitecustomize`)
_SITE = 'import atexit, sys\natexit.register(lambda: print("teardown ran", file=sys.stderr))\n'


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`python -m math2 ARGS` (or `python -c CODE ARGS`) over an index of the fixture."""
    folder = tmp_path_factory.mktemp("cli")
    index = folder / "index"
    build_index(library_store(folder, FIX), index / "mathlib", "mathlib", mathlib_dir=FIX)
    (folder / "site").mkdir()
    (folder / "site" / "sitecustomize.py").write_text(_SITE)
    src = Path(math2.__file__).resolve().parents[1]
    env = os.environ | {
        "MATH2_RETRIEVAL__INDEX_DIR": str(index), "MATH2_CONFIG": str(folder / "absent.toml"),
        "COLUMNS": "200",
        "PYTHONPATH": os.pathsep.join([str(folder / "site"), str(src),
                                       os.environ.get("PYTHONPATH", "")]),
    }  # fmt: skip

    def run(
        *args: str, code: str | None = None, close_stderr: bool = False
    ) -> subprocess.CompletedProcess[str]:
        how = ["-c", code] if code else ["-m", "math2"]
        cmd = [sys.executable, *how, *args]
        if close_stderr:  # the process starts with descriptor 2 closed
            cmd = ["sh", "-c", 'exec "$@" 2>&-', "sh", *cmd]
        return subprocess.run(cmd, env=env, cwd=folder,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    return run


_MAIN = "import sys\nfrom math2.cli import main\nsys.argv = ['math2', *sys.argv[1:]]\nmain()\n"


def test_a_search_ends_without_the_interpreters_teardown(cli) -> None:
    """`math2 search` leaves with `os._exit(0)` once its hits are printed and flushed (the
    teardown cost 0.08-0.11 s of its CPU); every other ending keeps the teardown."""
    res = cli("search", "identity function", "-k", "3")
    assert res.returncode == 0 and " 1. " in res.stdout and "searched:" in res.stderr
    assert "teardown ran" not in res.stderr
    res = cli("search", "identity function", "-k", "3", "--json")  # a pipe, flushed in full
    assert res.returncode == 0 and len(json.loads(res.stdout)) == 3
    assert "teardown ran" not in res.stderr
    # the check sees a teardown where there is one: another command, a failed search, a
    # caller of `main` that is not math2's own script
    assert "teardown ran" in cli("--version").stderr
    failed = cli("search", "identity", "--library", "nosuch")
    assert failed.returncode == 2 and "teardown ran" in failed.stderr
    called = cli("search", "identity function", "-k", "3", code=_MAIN)
    assert called.returncode == 0 and " 1. " in called.stdout and "teardown ran" in called.stderr


_RUNPY = (
    "import runpy, sys\nsys.argv = ['math2', *sys.argv[1:]]\n"
    "runpy.run_module('math2', run_name='__main__', alter_sys=True)\n"
)


def test_a_host_running_math2s_main_keeps_its_teardown(cli) -> None:
    """A host that runs math2's `__main__` itself (runpy, as `coverage run -m math2` and
    `python -m pdb -m math2` do) is not math2's own process: its exit handlers run."""
    hosted = cli("search", "identity function", "-k", "3", code=_RUNPY)
    assert hosted.returncode == 0 and " 1. " in hosted.stdout
    assert "teardown ran" in hosted.stderr


def test_a_search_with_stderr_closed_still_succeeds(cli) -> None:
    """Started with descriptor 2 closed (`2>&-`: `sys.stderr` is None), a search that found
    its hits exits 0, as it did before the no-teardown exit."""
    res = cli("search", "identity function", "-k", "3", close_stderr=True)
    assert res.returncode == 0 and " 1. " in res.stdout
