"""Issue 45 (branch rank46): why the learned ranker trained on the searchproj fixture misses
`deriv_mul` for "derivative of a product of two functions" (tests/retrieval/test_ranker.py's
strict expected failure), read off the model's inputs.

    python benchmarks/ranker_fixture.py [--extra benchmarks/ranker_fixture_users]
        [--mathlib-rows ROWS.pkl]

Builds the fixture's index in a temporary folder (as the test does), makes the rows of its dev
sets (and, with `--extra`, of those and the sets of that folder besides:
`ranker_fixture_users/` holds 20 queries in users' words for other fixture targets, written
for math2 and not kept in the fixture), and prints: how many
answers are the lexical top (over Mathlib's dev rows too, with `--mathlib-rows`), and the
rank of the three test queries' answers under a model trained on those rows, unconstrained
and under `ranker_monotone.SETS["all ordered"]`, at mixes 0.25, 0.5, 1 and 2; with
`--mathlib-rows`, also under models trained on 44 answered Mathlib dev queries drawn at random
(seeds 0–5) and on all of them.
"""

from __future__ import annotations

import argparse
import pickle
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from ranker_monotone import params

from math2.retrieval import ranker
from math2.retrieval.devsets import DevItem, read_devsets
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.ranker import QueryRows, fit, mixed, query_rows

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "searchproj"
TESTS = {
    "derivative of a product of two functions": {"deriv_mul"},
    "group homomorphism": {"MonoidHom"},
    r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$": {
        "Finset.sum_range_id_mul_two",
        "Finset.sum_range_id",
    },
}
MIXES = (0.25, 0.5, 1.0, 2.0)


def lexical_top(data: list[QueryRows]) -> str:
    col = ranker._COL["lexical_rank"]
    answered = [d for d in data if d.labels.any()]
    top = sum(float(d.rows[d.labels > 0][:, col].min()) == 0 for d in answered)
    return f"{top} of {len(answered)} answered queries have an answer at the lexical top"


def ranks(model: object, tests: list[QueryRows], mix: float) -> list[int]:
    out = []
    for d in tests:
        s = mixed(model.predict(d.rows), d.rows, mix)  # type: ignore[attr-defined]
        order = np.argsort(-s, kind="stable").tolist()
        out.append(next(i for i, j in enumerate(order) if d.labels[j] > 0) + 1)
    return out


def report(label: str, train: list[QueryRows], tests: list[QueryRows]) -> None:
    for name, p in (("unconstrained", None), ("monotone, all ordered", params("all ordered"))):
        model = fit(train, params=p)
        cells = ", ".join(f"mix {m:g}: {ranks(model, tests, m)}" for m in MIXES)
        print(f"{label}, {name}: {cells}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extra", type=Path, help="a folder of dev sets trained on besides")
    ap.add_argument("--mathlib-rows", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.retrieval.conftest import library_store

    work = Path(tempfile.mkdtemp(prefix="ranker_fixture_"))
    try:
        ranker.MIN_QUERIES = 20
        store = library_store(work, FIX)
        build_index(store, work / "index", "mathlib", mathlib_dir=FIX,
                    ranker_sets=FIX / "devsets")  # fmt: skip
        ix = SearchIndex(work / "index", use_ranker=False)
        kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
        tests = query_rows(ix, [DevItem("test", q, frozenset(a), "theorem")
                                for q, a in TESTS.items()])  # fmt: skip
        print("ranks (1 = first) of:", "; ".join(TESTS))
        own = read_devsets(FIX / "devsets", kinds)
        for label, items in (("its own dev sets", own), (f"and {args.extra}", own + (
                read_devsets(args.extra, kinds) if args.extra else []))):  # fmt: skip
            if label.startswith("and") and not args.extra:
                continue
            data = query_rows(ix, items)
            print(f"\nfixture, trained on {label}: {lexical_top(data)}")
            report("fixture", data, tests)
        if args.mathlib_rows:
            rows: list[QueryRows] = pickle.loads(args.mathlib_rows.read_bytes())["rows"]
            answered = [d for d in rows if d.labels.any()]
            print(f"\nMathlib's dev rows: {lexical_top(rows)}")
            for seed in range(6):
                report(f"44 Mathlib queries, seed {seed}", random.Random(seed).sample(answered, 44),
                       tests)  # fmt: skip
            report("every Mathlib query", rows, tests)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
