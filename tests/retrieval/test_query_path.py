"""Issue 45 §6: what the query path computes more cheaply gives exactly what it gave before —
the name-part scores over the names that have a term only, a name's words and its last
component's read only where they can count — and a process
that searches reuses freed memory instead of faulting it in again page by page."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from math2.lean.syntax import split_identifier
from math2.retrieval import lexical
from math2.retrieval.features import FEATURES, candidate_features
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.nameparts import document_parts, query_weights
from math2.retrieval.text import tokens
from tests.retrieval.conftest import library_store
from tests.retrieval.test_ranker import FIX


def dense_one_of_scores(lx: lexical.Lexical, terms: list[list[str]]) -> np.ndarray:
    """`Lexical.one_of_scores` as it was written first: passes over every document."""
    out = np.zeros(lx.num_docs, dtype=np.float64)
    for term in terms:
        ids = [i for i in map(lx.token_id, dict.fromkeys(term)) if i is not None]
        if not ids:
            continue
        spans = [(int(lx.indptr[i]), int(lx.indptr[i + 1])) for i in ids]
        docs = np.concatenate([lx.indices[a:b] for a, b in spans])
        factor = np.concatenate(
            [np.asarray(lx.data[a:b], dtype=np.float64) / lx.idf(b - a) for a, b in spans]
        )
        count = np.bincount(docs, minlength=lx.num_docs)
        length = np.bincount(docs, weights=factor, minlength=lx.num_docs)
        said = count > 0
        out[said] += lx.idf(int(said.sum())) * length[said] / count[said]
    return out.astype(np.float32)


def test_the_name_part_scores_are_those_of_the_pass_over_every_name(tmp_path) -> None:
    rng = np.random.default_rng(0)
    words = ["deriv", "mul", "prod", "sum", "add", "exp", "log", "a", "b", "c", "d"]
    docs = [list(dict.fromkeys(rng.choice(words, size=rng.integers(1, 6)).tolist()))
            for _ in range(500)]  # fmt: skip
    lexical.build(docs, tmp_path / "parts")
    lx = lexical.Lexical(tmp_path / "parts")
    cases = [[["prod", "mul"], ["deriv"]], [["mul", "prod", "sum"]], [["exp"]],
             [["nosuch"], ["log", "nosuch"]], [["a", "b"], ["b", "c"], ["c"]], []]  # fmt: skip
    for terms in cases:
        got, want = lx.one_of_scores(terms), dense_one_of_scores(lx, terms)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), terms


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> SearchIndex:
    folder = tmp_path_factory.mktemp("path")
    build_index(library_store(folder, FIX), folder / "index", "mathlib", mathlib_dir=FIX)
    return SearchIndex(folder / "index", use_ranker=False)


@pytest.mark.parametrize(
    "query",
    ["derivative of a product of two functions", "group homomorphism",
     r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$", "mul_comm", "|x| ≤ 1"],
)  # fmt: skip
def test_the_name_features_are_those_of_every_name_tokenised(index, query) -> None:
    """`parts_precision` and `parts_last` as they were computed first: every candidate's
    name and last component tokenised (`document_parts`)."""
    (r,) = index.rankings([query], terms=True)
    positions, rows = candidate_features(index, query, r, {})
    assert len(positions)
    col = {f: i for i, f in enumerate(FEATURES)}
    wanted = set(query_weights(query, index.levers.vocabulary_weights, index.families))
    for p, row in zip(positions.tolist(), rows, strict=True):
        name = index.name(p)
        own, last = document_parts(name), document_parts(name.rsplit(".", 1)[-1])
        hits = sum(w in wanted for w in own)
        assert row[col["parts_precision"]] == (hits / max(1, len(own)) if wanted else 0.0)
        share = sum(w in wanted for w in last) / max(1, len(last)) if wanted else 0.0
        assert row[col["parts_last"]] == share, name


def test_a_name_read_word_by_word_gives_the_words_of_the_whole() -> None:
    """`document_parts` tokenises a name word by word (each word's tokens cached): the same
    set of tokens as the whole name's text, bars (read by their context) included."""
    names = ["Finset.sum_range_id_mul_two", "Nat.Prime.two_le", "schröder_bernstein",
             "Real.sqrt_two_mul_self", "Set.«term{_|_}»", "abs_sub_lt_iff", "x|y|z",
             "«term_∣_»", "Bézout.ℝ≥0_le", "Finset.prod_pow_eq_pow_sum₂",
             "Polynomial.X"]  # fmt: skip
    for name in names:
        words = split_identifier(name.replace("«", "").replace("»", ""))
        whole = tokens(" ".join(words), True, True)
        got = document_parts.__wrapped__(name)
        assert set(got) == set(whole) and len(got) == len(set(whole)), name


def test_the_lexical_sum_and_the_bulk_reads_are_the_plain_ones(index) -> None:
    terms = index.lexical_parts("derivative of a product of two functions")
    assert len(terms) > 2
    assert lexical.total(terms.values()).tobytes() == sum(terms.values()).tobytes()
    positions = np.array([5, 0, 17, 5, len(index) - 1])
    assert index.names_at(positions) == [index.name(p) for p in positions.tolist()]
    kinds = index.cards.kinds([*positions.tolist(), -1])
    assert kinds == [index.cards[p].kind for p in [*positions.tolist(), -1]] and any(kinds)
    assert kinds[-1] is None
    cards = index.cards.many([*positions.tolist(), -1])
    assert cards == [index.cards[p] for p in [*positions.tolist(), -1]] and cards[-1].kind is None


_FAULTS = """
import resource, sys
import numpy as np
from math2.util.heap import keep_freed_blocks
if sys.argv[1] == "keep":
    assert keep_freed_blocks()
def query():
    scores = [np.ones(280_000) for _ in range(8)]  # a query's score arrays, 2.2 MB each
    return sum(a.sum() for a in scores)
query()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    query()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_a_searching_process_reuses_freed_blocks() -> None:
    """Five rounds of eight 2.2 MB arrays alive at once, freed before the next round: glibc
    gives them back to the system and faults them in again (500 pages each), unless
    `keep_freed_blocks` told it to keep them."""

    def faults(mode: str) -> int:
        code = textwrap.dedent(_FAULTS)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MALLOC_")
            and not k.startswith("GLIBC_TUNABLES")
            and k != "LD_PRELOAD"
        }  # fmt: skip  (glibc's defaults, its own allocator)
        out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True,
                             text=True, check=True, env=env)  # fmt: skip
        return int(out.stdout)

    assert faults("plain") > 10_000
    assert faults("keep") < 500


def test_a_query_read_again_is_read_the_same() -> None:
    """A query's tokens and Mathlib words are kept for the parts and features that read them
    again: a caller that changes the list it got changes nothing for the next."""
    from math2.retrieval.english import mathlib_words
    from math2.retrieval.text import query_tokens

    for read, query in ((mathlib_words, "derivative of a product"),
                        (lambda q: query_tokens(q, True, True), "Nat.Prime.two_le")):  # fmt: skip
        first = read(query)
        assert first
        first.append("changed")
        assert read(query) == first[:-1]


_WHO_KEEPS = """
import sys
from pathlib import Path
from math2.util.heap import keep_freed_blocks
if sys.argv[1] == "index":
    from math2.retrieval.index import SearchIndex
    SearchIndex(Path(sys.argv[2]), use_ranker=False)
else:
    from math2.cli import main
    sys.argv = ["math2", "search", "--help"]
    try:
        main()
    except SystemExit:
        pass
print(keep_freed_blocks.cache_info().currsize, file=sys.stderr)
"""


def test_only_the_one_query_process_keeps_freed_blocks(index) -> None:
    """`math2 search` keeps freed blocks; opening an index does not (a server's threads would
    each keep `TRIM`: review of perf45, M1)."""

    def kept(*argv: str) -> str:
        out = subprocess.run([sys.executable, "-c", _WHO_KEEPS, *argv], capture_output=True,
                             text=True, check=True)  # fmt: skip
        return out.stderr.strip().splitlines()[-1]

    assert kept("index", str(index.folder)) == "0"
    assert kept("cli") == "1"
