"""Issue 45 §3: the learned ranker, built by the index build from dev sets, kept beside the
index as a versioned artifact; over an index written for math2 (tests/fixtures/searchproj) and
dev sets written for it (its devsets/, none of them the queries asked here)."""

import json
import re
import shutil
from pathlib import Path

import pytest

from math2.retrieval import ranker as ranker_mod
from math2.retrieval.devsets import read_devsets
from math2.retrieval.features import FEATURES, RANK_MISSING, candidate_features
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.ranker import RANKER_DIR, RankerMismatch, RankerMissing
from tests.retrieval.conftest import library_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "searchproj"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranker")
    store = library_store(folder, FIX)
    mp = pytest.MonkeyPatch()
    mp.setattr(ranker_mod, "MIN_QUERIES", 20)  # the fixture's sets hold 38 queries
    try:
        meta = build_index(store, folder / "index", "mathlib", mathlib_dir=FIX,
                           ranker_sets=FIX / "devsets")  # fmt: skip
    finally:
        mp.undo()
    return folder / "index", meta


@pytest.fixture
def index_copy(built, tmp_path) -> Path:
    folder = tmp_path / "index"
    shutil.copytree(built[0], folder)
    return folder


def top(index: SearchIndex, query: str, k: int = 3) -> list[str]:
    return [h.name for h in index.search(query, k, ranker=True)]


def test_the_build_writes_a_versioned_ranker(built) -> None:
    folder, meta = built
    info = json.loads((folder / RANKER_DIR / "ranker.json").read_text())
    assert info["version"] == ranker_mod.RANKER_VERSION
    assert info["features"] == list(FEATURES)
    assert info["index"] == ranker_mod.index_digest(folder)
    assert info["queries"] == {"latex": 4, "lean": 7, "natural": 33} == meta["ranker"]
    assert SearchIndex(folder, use_ranker=True).learned is not None


def test_the_ranker_orders_the_search_when_asked(built) -> None:
    """With the ranker the order is the model's, not the fusion's (a candidate's score is
    the model's output, not a sum of reciprocal ranks)."""
    ix = SearchIndex(built[0], use_ranker=True)
    assert ix.use_ranker and SearchIndex(built[0]).use_ranker  # on by default where built
    assert not SearchIndex(built[0], use_ranker=False).use_ranker
    learned = ix.search("group homomorphism", k=5)
    fused = ix.search("group homomorphism", k=5, ranker=False)
    assert [h.score for h in learned] != [h.score for h in fused]
    assert all(h.score < 1 / 60 * 4 for h in fused)  # reciprocal ranks
    # the model's scores relative to the best, which scores 1 (libraries merge by this)
    assert learned[0].score == 1.0 and all(0 < h.score <= 1 for h in learned)


@pytest.mark.xfail(
    strict=True,
    reason="not met on the fixture: its ranker, trained on its 44 queries (36 answered by the "
    "lexical top; 266 of 803 over Mathlib), learns the lexical features and ranks deriv_mul 5th "
    "(11th before fields46); what was tried and why it is not shipped: docs/benchmarks.md, "
    "rank46 and 'Issue 45 at the merge'; over all of Mathlib the shipped ranker ranks it 1st",
)
def test_derivative_of_a_product(built) -> None:
    assert "deriv_mul" in top(SearchIndex(built[0]), "derivative of a product of two functions")


def test_group_homomorphism(built) -> None:
    assert "MonoidHom" in top(SearchIndex(built[0]), "group homomorphism")


def test_a_latex_sum(built) -> None:
    found = top(SearchIndex(built[0]), r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$")
    assert {"Finset.sum_range_id_mul_two", "Finset.sum_range_id"} & set(found), found


def test_the_first_stage_keeps_what_one_part_finds(built) -> None:
    """A candidate only the name-part ranking finds is among the candidates (here the lexical
    top is cut to one so that it is), its missing lexical rank the sentinel."""
    ix = SearchIndex(built[0], use_ranker=False)
    query = "derivative of a product of two functions"
    (r,) = ix.rankings([query], terms=True)
    assert r.lexical is not None
    r.lexical = r.lexical[:1]
    only = [p for p in r.nameparts.tolist() if p not in r.lexical.tolist()]
    assert only and set(only) <= set(r.candidates().tolist())
    positions, rows = candidate_features(ix, query, r, {})
    j = positions.tolist().index(only[0])
    assert rows[j][FEATURES.index("lexical_rank")] == RANK_MISSING
    assert rows[j][FEATURES.index("parts_rank")] < RANK_MISSING
    assert rows[j][FEATURES.index("parts_score")] > 0


def test_postings_are_ascending_so_matched_bisects(built) -> None:
    """`lexical.Lexical.matched` finds positions by bisection in each token's documents: they
    must be ascending in every part the features read, and the counts those of a set test."""
    import numpy as np

    from math2.retrieval import lexical

    for part in ("bm25", "parts"):
        lx = lexical.Lexical(built[0] / part)
        for t in range(len(lx.indptr) - 1):
            docs = np.asarray(lx.indices[lx.indptr[t] : lx.indptr[t + 1]])
            assert (np.diff(docs) > 0).all(), (part, t)
    ix = SearchIndex(built[0])
    positions = np.arange(len(ix))
    words = ["deriv", "mul", "hom", "nosuchword"]
    want = [sum(int(p) in set(ix.bm25.postings(w).tolist()) for w in words) for p in positions]
    assert ix.bm25.matched(words, positions).tolist() == want


def test_tied_name_part_scores_share_a_rank(built) -> None:
    """Names with the same name-part score are not ordered by their place in the index: the
    fusion and the features give them one rank."""
    ix = SearchIndex(built[0], use_ranker=False)
    (r,) = ix.rankings(["a product"], parts=("bm25", "nameparts"), terms=True)
    assert r.nameparts_score is not None
    scores = r.nameparts_score[r.nameparts]
    ranks = r.shared_ranks("nameparts")
    assert len(set(scores.tolist())) < len(scores), "the fixture has tied names"
    for i in range(1, len(scores)):
        assert (ranks[i] == ranks[i - 1]) == (scores[i] == scores[i - 1])


def test_a_rebuilt_index_refuses_its_old_ranker(index_copy) -> None:
    meta = json.loads((index_copy / "meta.json").read_text())
    meta["built_at"] += 1
    (index_copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(RankerMismatch, match=r"math2 index build --library mathlib"):
        SearchIndex(index_copy, use_ranker=True)
    with pytest.raises(RankerMismatch, match=r"math2 index build --library mathlib"):
        SearchIndex(index_copy)  # the ranker is the default: a stale one is an error at open
    with pytest.raises(RankerMismatch, match=r"math2 index build --library mathlib"):
        SearchIndex(index_copy, use_ranker=False).search("group homomorphism", ranker=True)
    SearchIndex(index_copy, use_ranker=False).search("group homomorphism")  # the fusion still


def test_another_feature_version_is_refused(index_copy, monkeypatch) -> None:
    monkeypatch.setattr(ranker_mod, "RANKER_VERSION", ranker_mod.RANKER_VERSION + 1)
    with pytest.raises(RankerMismatch, match=r"version .*rebuild both with `math2 index build"):
        SearchIndex(index_copy, use_ranker=True)


def test_a_ranker_trained_at_another_width_is_refused(index_copy) -> None:
    """The rows a model learns from are made at the first stage's width (`ranker.POOL`): its
    rank features and candidates mean another thing at another width (review of qual45f)."""
    info_file = index_copy / RANKER_DIR / "ranker.json"
    info = json.loads(info_file.read_text())
    assert info["pool"] == ranker_mod.POOL
    info["pool"] = ranker_mod.POOL + 100
    info_file.write_text(json.dumps(info))
    with pytest.raises(RankerMismatch, match=r"top 200, this math2 orders the top 100"):
        SearchIndex(index_copy, use_ranker=True)
    del info["pool"]  # an artifact that does not say is refused too
    info_file.write_text(json.dumps(info))
    with pytest.raises(RankerMismatch, match=r"top None"):
        SearchIndex(index_copy, use_ranker=True)


def test_a_changed_model_file_is_refused(index_copy) -> None:
    model = index_copy / RANKER_DIR / "model.txt"
    model.write_text(model.read_text().replace("learning_rate", "learning_rate ", 1))
    with pytest.raises(RankerMismatch, match=r"model\.txt is not the one it recorded"):
        SearchIndex(index_copy, use_ranker=True)


def test_a_model_rebuilt_after_open_is_never_read_unchecked(index_copy, tmp_path) -> None:
    """An open index orders by the model it checked at open: a rebuild in place since
    (`build_ranker` removes the artifact and writes a new one, digest and all) is not read by
    the first query to order (LightGBM loads lazily), which gets the checked model's order."""
    here = index_copy / RANKER_DIR
    reference = tmp_path / "reference"
    shutil.copytree(index_copy, reference)
    query = "group homomorphism"
    expected = [(h.name, h.score) for h in SearchIndex(reference).search(query, k=10)]
    ix = SearchIndex(index_copy, use_ranker=True)  # checked; LightGBM not loaded yet
    text, info = (here / "model.txt").read_text(), json.loads((here / "ranker.json").read_text())
    # another model: every leaf's value negated, which reverses what the model says (without
    # the trees' byte sizes, which the new values change: LightGBM then reads tree by tree)
    other = re.sub(r"^leaf_value=(.*)$", lambda m: "leaf_value=" + " ".join(
        repr(-float(v)) for v in m.group(1).split()), text, flags=re.M)  # fmt: skip
    other = re.sub(r"^tree_sizes=.*\n", "", other, flags=re.M)
    assert other != text
    shutil.rmtree(here)
    here.mkdir()
    (here / "model.txt").write_text(other)
    info["model"] = ranker_mod.hashlib.sha256(other.encode()).hexdigest()
    (here / "ranker.json").write_text(json.dumps(info))
    assert [(h.name, h.score) for h in ix.search(query, k=10)] == expected
    # the rebuilt artifact is itself valid, and orders otherwise: what the search did not read
    assert [(h.name, h.score) for h in SearchIndex(index_copy).search(query, k=10)] != expected


def test_a_missing_lightgbm_is_an_error_at_open(index_copy, monkeypatch) -> None:
    monkeypatch.setattr(ranker_mod, "LIGHTGBM", "no_such_lightgbm")
    with pytest.raises(RankerMissing, match="needs LightGBM: pip install"):
        SearchIndex(index_copy, use_ranker=True)
    SearchIndex(index_copy, use_ranker=False).search("group homomorphism")  # the fusion still


def test_no_ranker_where_too_few_dev_queries_are_answered(index_copy) -> None:
    """The packaged dev sets name Mathlib's declarations, which the fixture mostly lacks: no
    ranker, the fusion orders, and asking for the ranker says how to get one."""
    ix = SearchIndex(index_copy, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(FIX / "devsets", kinds)[:5]
    assert ranker_mod.build_ranker(ix, items, lambda _m: None) is None
    assert not (index_copy / RANKER_DIR).exists()
    plain = SearchIndex(index_copy, use_ranker=True)
    assert not plain.use_ranker and plain.search("group homomorphism")
    with pytest.raises(RankerMissing, match="math2 index build --library mathlib"):
        plain.search("group homomorphism", ranker=True)


def test_the_command_line_orders_by_the_ranker_when_asked(built, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from math2.cli import app

    shutil.copytree(built[0], tmp_path / "index" / "mathlib")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'none.db'}")
    learned = CliRunner().invoke(app, ["search", "group homomorphism", "--ranker", "--json"])
    assert learned.exit_code == 0, learned.output
    assert "ordered by the learned ranker" in learned.stderr
    fused = CliRunner().invoke(app, ["search", "group homomorphism", "--fusion", "--json"])
    assert fused.exit_code == 0 and "learned ranker" not in fused.stderr
    default = CliRunner().invoke(app, ["search", "group homomorphism", "--json"])
    assert default.exit_code == 0 and "ordered by the learned ranker" in default.stderr
    assert default.stdout == learned.stdout
    # an index without a ranker: the default is the fusion, and asking for the ranker fails
    shutil.rmtree(tmp_path / "index" / "mathlib" / RANKER_DIR)
    plain = CliRunner().invoke(app, ["search", "group homomorphism", "--json"])
    assert plain.exit_code == 0 and "learned ranker" not in plain.stderr
    asked = CliRunner().invoke(app, ["search", "group homomorphism", "--ranker"])
    assert asked.exit_code != 0 and "math2 index build --library mathlib" in asked.output
    want = [h.name for h in SearchIndex(built[0]).search("group homomorphism", 10, ranker=True)]
    assert [h["name"] for h in json.loads(learned.stdout)] == want


def test_the_fusion_orders_where_the_model_says_nothing() -> None:
    """The shipped score is the model's, standardised, plus `MIX` × the first stage's order: a
    model that scores every candidate alike leaves the fusion's order, and a model that
    prefers one by far overturns it."""
    import numpy as np

    rows = np.zeros((3, len(FEATURES)))
    rows[:, FEATURES.index("fused_rank")] = [5, 0, 2]
    rows[:, FEATURES.index("parts_rank")] = RANK_MISSING  # no other part ranks them
    rows[:, FEATURES.index("gloss_rank")] = RANK_MISSING
    flat = ranker_mod.mixed(np.full(3, 0.7), rows)
    assert np.argsort(-flat).tolist() == [1, 2, 0]
    assert int(np.argmax(ranker_mod.mixed(np.array([0.0, 0.0, 3.0]), rows))) == 2
    # the mix is recorded with the artifact and read back from it
    assert ranker_mod.mixed(np.array([0.0, 0.0, 3.0]), rows, mix=10.0).argmax() == 1


def test_a_mined_word_counts_by_its_reliability() -> None:
    """Name words a hand-written row gives count 1; a mined pairing counts its Dice
    coefficient, and the best family's weight is kept where two give one word."""
    from math2.retrieval.nameparts import query_weights

    mined = {"gadget": 0.4, "deriv": 0.3}
    got = query_weights("derivative of a widget", lambda _q: mined)
    assert got == {"deriv": 1.0, "gadget": 0.4}
    assert query_weights("derivative of a widget", lambda _q: mined,
                         frozenset({"english"})) == {"deriv": 1.0}  # fmt: skip


def test_the_name_part_features_of_a_short_name_made_of_the_asked_words(built) -> None:
    ix = SearchIndex(built[0], use_ranker=False)
    query = "derivative of a product of two functions"
    (r,) = ix.rankings([query], terms=True)
    positions, rows = candidate_features(ix, query, r, {})
    names = [ix.name(p) for p in positions.tolist()]
    row = dict(zip(FEATURES, rows[names.index("deriv_mul")].tolist(), strict=True))
    assert row["parts_last"] == 1.0 and row["parts_precision"] == 1.0
    # every mapped word is a hand-written row here: the reliable coverage is the coverage
    assert row["parts_reliable"] == row["parts_coverage"] > 0
    # "product" is `prod` or `mul`: the name says both things asked for with one of the two
    assert row["parts_coverage"] < 1.0 and row["parts_groups"] == 1.0
    other = dict(zip(FEATURES, rows[names.index("deriv_const_mul")].tolist(), strict=True))
    assert other["parts_last"] < 1.0


def test_the_mix_credits_a_part_that_ranks_a_candidate_alone_near_its_top() -> None:
    """The mix's order (`ranker.first_ranks`, "strict"): a candidate only the name-part
    ranking finds, first there by itself, is not pushed down as unranked by the fusion (as
    `deriv_mul` was, rank 15–18 over all of Mathlib); one that shares its name-part score with
    many others is credited only at the last of them; no part ranking it is no credit."""
    import numpy as np

    col = {f: i for i, f in enumerate(FEATURES)}
    rows = np.zeros((5, len(FEATURES)))
    rows[:, col["fused_rank"]] = [RANK_MISSING, 4, RANK_MISSING, RANK_MISSING, RANK_MISSING]
    rows[:, col["parts_rank"]] = [0, RANK_MISSING, 1, 1, 1]
    rows[:, col["parts_score"]] = [3.0, 0.0, 2.0, 2.0, 2.0]
    rows[:, col["gloss_rank"]] = RANK_MISSING
    assert ranker_mod.first_ranks(rows, "strict").tolist() == [0, 4, 3, 3, 3]
    assert ranker_mod.first_ranks(rows, "best").tolist() == [0, 4, 1, 1, 1]
    assert ranker_mod.first_ranks(rows, "fused").tolist() == rows[:, col["fused_rank"]].tolist()
    flat = ranker_mod.mixed(np.zeros(5), rows, 0.25, "strict")
    assert int(np.argmax(flat)) == 0
    assert int(np.argmax(ranker_mod.mixed(np.zeros(5), rows, 0.25, "fused"))) == 1
    with pytest.raises(ValueError, match="unknown first-stage order"):
        ranker_mod.first_ranks(rows, "nosuch")


def test_one_thing_named_two_ways_counts_once_in_the_name_part_ranking(tmp_path) -> None:
    """`product` is `prod` or `mul`: the name-part ranking counts the pair as one term with
    the IDF of the names that have either, so a name with the rarer word is not above one
    with the commoner word of the same length, and a name with both is not above either."""
    import numpy as np

    from math2.retrieval import lexical

    docs = [["deriv", "mul"], ["deriv", "prod"], ["deriv", "prod", "mul"], ["mul", "a"],
            ["mul", "b"], ["mul", "c"], ["prod", "d"], ["e", "f"]]  # fmt: skip
    lexical.build(docs, tmp_path / "parts")
    lx = lexical.Lexical(tmp_path / "parts")
    one = lx.one_of_scores([["prod", "mul"], ["deriv"]])
    assert one[0] == pytest.approx(one[1]) and one[0] > one[2] > one[3] > 0 == one[7]
    assert lx.scores(["prod", "mul", "deriv"])[1] > lx.scores(["prod", "mul", "deriv"])[0]
    single = lx.one_of_scores([["deriv"], ["mul"]])
    assert np.allclose(single, lx.scores(["deriv", "mul"]))


def test_the_name_part_terms_of_a_query() -> None:
    from math2.retrieval.nameparts import query_terms

    assert query_terms("derivative of a product of two functions") == [["prod", "mul"],
                                                                     ["deriv"]]  # fmt: skip
    # a compound's words are each a term: a name must say both
    assert query_terms("bounded above") == [["bdd"], ["abov"]]
    # "multiplicative" asks for `mul` alone: the joined `prod | mul` of "product" does not
    # absorb it (review note L4)
    terms = query_terms("the product of two multiplicative functions is multiplicative")
    assert ["prod", "mul"] in terms and ["mul"] in terms
    assert query_terms("product of compact spaces is compact") == [["prod", "mul"]]


def test_what_a_query_asks_for_in_groups() -> None:
    from math2.retrieval.nameparts import query_groups

    assert query_groups("derivative of a product of two functions") == [["prod", "mul"],
                                                                       ["deriv"]]  # fmt: skip
    assert query_groups("the derivative", families=frozenset({"latex"})) == []


def test_the_name_cover_features(built) -> None:
    """`name_cover`: the share of the query's own and mapped words a name has; `name_extra`:
    the share of the name's words the query neither says nor maps to (`MonoidHom.ker` says
    nothing else than "kernel of a monoid homomorphism"; `MonoidHom.ker_eq_bot_iff` more)."""
    ix = SearchIndex(built[0], use_ranker=False)
    query = "kernel of a monoid homomorphism"
    (r,) = ix.rankings([query], terms=True)
    positions, rows = candidate_features(ix, query, r, {})
    at = {ix.name(p): rows[j] for j, p in enumerate(positions.tolist())}
    cover, extra = FEATURES.index("name_cover"), FEATURES.index("name_extra")
    ker, iff, hom = at["MonoidHom.ker"], at["MonoidHom.ker_eq_bot_iff"], at["MonoidHom"]
    assert ker[extra] == 0 < iff[extra] and hom[extra] == 0
    assert ker[cover] == iff[cover] > hom[cover] > 0


def test_the_ranker_orders_a_wider_first_stage_than_the_fusion(built, monkeypatch) -> None:
    """Under the learned ranker each part keeps its top `stage.RANKER_POOL`, under the fusion
    its top `stage.POOL` (both 100, as measured; two constants, so either can be widened); the
    rows the ranker trains on are made at the ranker's width (`ranker.POOL`)."""
    from math2.retrieval import stage

    assert stage.RANKER_POOL == ranker_mod.POOL == 100 and stage.POOL == 100
    monkeypatch.setattr(stage, "RANKER_POOL", 200)
    asked: list[int] = []
    ix = SearchIndex(built[0])
    real = ix.rankings
    monkeypatch.setattr(ix, "rankings", lambda qs, pool, *a, **kw: asked.append(pool) or real(
        qs, pool, *a, **kw))  # fmt: skip
    ix.search("group homomorphism", 3, ranker=True)
    ix.search("group homomorphism", 3, ranker=False)
    ix.search("group homomorphism", 3, ranker=True, pool=7)
    assert asked == [200, 100, 7]
