"""What the learned ranker (`ranker.py`) reads of each candidate of a query: one row of
`FEATURES` per position of the first stage's union (`stage.Rankings.candidates`).

- each part's rank among its top (`RANK_MISSING` where the part did not rank the candidate;
  tied scores share a rank, `Rankings.shared_ranks`) and score: the lexical score and each of
  its weighted terms (`stage.LEXICAL_TERMS`), the namesakes' rank and cover, the name-part
  and gloss rankings (`nameparts.py`), the dense and description ranks, and the hand-tuned
  fusion's score and rank (`stage.fuse`);
- the name-part coverage: the share of the query's mapped name words (`nameparts.query_parts`)
  that the candidate's name has, and the share of its name's words that are among them (its
  precision: `deriv_mul` is all asked for, `mul_pos_of_two_functions` mostly not), the same
  coverage with each word counted by its reliability (`nameparts.query_weights`: a mined
  pairing at its Dice coefficient), and the share of its last component's words that are
  asked for (`HasDerivAt.mul` → `mul`), and the share of the things the query asks for that
  its name says in one of their words (`nameparts.query_groups`: "product" is `prod` or
  `mul`, so `deriv_mul` says all of "derivative of a product"); the share of the query's
  tokens in its words; the share of the query's own tokens and mapped words that its *name*
  has, and the share of its name's words the query neither says nor maps to (`name_cover`,
  `name_extra`: the instance `Real.instCompleteSpace` over the class `CompleteSpace` for "the
  real numbers are complete"; issue 45, branch qual45c, after reading the instance misses);
- the candidate itself: its kind (`KINDS`), namespace depth, name length, PageRank prior; the
  family head: how many candidates live in its namespace (`MonoidHom` over `MonoidHom.comp`)
  and whether its own namespace is a candidate (an API lemma of one);
- the query: its prose share, token count, mapped word count and whether it holds LaTeX, so
  that one model weighs the parts differently for a formula and a sentence;
- a structure's fields (`fieldmap.py`; issue 45, branch fields46, after reading the `fields`
  set's misses): the fields of the concepts some part ranks high, and those the query reaches
  by a variable's dot (`e.toFun`), join the candidates; the best rank of the candidate's
  namespace where that is a candidate (`owner_rank`), the share of the query's words a word of
  a field's or its namespace's name abbreviates (`prefix_cover`: `adj` "adjacency") and how
  much more than its namespace's name does (`owner_gain`: `SimpleGraph.Adj` over
  `SimpleGraph`), and whether its
  last component is what the query reaches by a dot (`dot_field`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from math2.retrieval.fieldmap import dot_names, extra_fields, prefix_cover, query_words
from math2.retrieval.latex import has_latex
from math2.retrieval.lexical import weighted_sum
from math2.retrieval.nameparts import document_parts, query_groups, query_weights
from math2.retrieval.stage import LEXICAL_TERMS as TERMS
from math2.retrieval.stage import Rankings
from math2.retrieval.text import prose_tokens

if TYPE_CHECKING:
    from math2.retrieval.index import SearchIndex

RANK_MISSING = 1000.0  # the rank of a candidate a part did not rank (beyond every pool)
# The kinds a card names, as codes (0: any other); finer than `names.KIND_CODES`.
KINDS = {
    "theorem": 1, "lemma": 1, "def": 2, "abbrev": 2, "irreducible_def": 2, "opaque": 2,
    "structure": 3, "class": 4, "class inductive": 4, "inductive": 5, "coinductive": 5,
    "instance": 6, "alias": 7, "axiom": 8, "field": 9,
}  # fmt: skip
FEATURES = (
    "fused", "fused_rank", "lexical", "lexical_rank", "lexical_ratio",
    *(f"term_{t}" for t in TERMS),
    "namesake_rank", "namesake_cover", "parts_score", "parts_rank", "parts_coverage",
    "parts_precision", "parts_reliable", "parts_last", "parts_groups", "gloss_score", "gloss_rank",
    "dense_rank", "desc_rank", "coverage",
    "kind", "depth", "name_length", "prior", "family_members", "family_member_of",
    "query_prose", "query_tokens", "query_mapped", "query_latex",
    "name_cover", "name_extra",
    # last: the rows of an older math2 are a prefix of these (benchmarks)
    "owner_rank", "owner_gain", "dot_field", "prefix_cover",
)  # fmt: skip


def _ranks(ranking: np.ndarray | None, cands: np.ndarray) -> np.ndarray:
    """Each candidate's rank in `ranking` (RANK_MISSING where absent)."""
    out = np.full(len(cands), RANK_MISSING)
    if ranking is None or len(ranking) == 0:
        return out
    where = {int(p): i for i, p in enumerate(ranking.tolist())}
    for j, p in enumerate(cands.tolist()):
        r = where.get(p)
        if r is not None:
            out[j] = r
    return out


def _at(score: np.ndarray | None, cands: np.ndarray) -> np.ndarray:
    return score[cands].astype(np.float64) if score is not None else np.zeros(len(cands))


def _shared(r: Rankings, part: str, cands: np.ndarray) -> np.ndarray:
    """Each candidate's rank in a part's top, tied scores sharing a rank (RANK_MISSING where
    absent)."""
    out = np.full(len(cands), RANK_MISSING)
    where = dict(zip(getattr(r, part).tolist(), r.shared_ranks(part).tolist(), strict=True))
    for j, p in enumerate(cands.tolist()):
        if p in where:
            out[j] = where[p]
    return out


_KIND_SEEN: WeakKeyDictionary[SearchIndex, dict[int, int]] = WeakKeyDictionary()


def _kinds(ix: SearchIndex, positions: list[int]) -> np.ndarray:
    """The candidates' kind codes (`KINDS`), each read from its card once per open index."""
    seen = _KIND_SEEN.setdefault(ix, {})
    new = [p for p in positions if p not in seen]
    for p, kind in zip(new, ix.cards.kinds(new), strict=True):
        seen[p] = KINDS.get(kind or "", 0)
    return np.array([seen[p] for p in positions], float)


def _typed(ix: SearchIndex) -> Callable[[list[int]], list[bool]]:
    """Which of some positions are structures or classes (their kinds read once, `_kinds`)."""
    codes = (KINDS["structure"], KINDS["class"])
    return lambda positions: [k in codes for k in _kinds(ix, positions).tolist()]


def _family(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per name: how many of the others are in its namespace, and whether its own namespace
    is one of them (`MonoidHom.comp` beside `MonoidHom`)."""
    present = set(names)
    members: dict[str, int] = {}
    for n in names:
        parts = n.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix in present:
                members[prefix] = members.get(prefix, 0) + 1
    heads = np.array([members.get(n, 0) for n in names], dtype=np.float64)
    member_of = np.array(
        [1.0 if "." in n and n.rsplit(".", 1)[0] in present else 0.0 for n in names]
    )
    return heads, member_of


# The ranks whose best is a candidate's owner's (`owner_rank`).
BEST_OF = ("fused_rank", "lexical_rank", "namesake_rank", "parts_rank", "gloss_rank",
           "dense_rank", "desc_rank")  # fmt: skip
NAME_COLUMNS = ("name_cover", "name_extra", "parts_coverage", "parts_precision",
                "parts_reliable", "parts_last", "parts_groups")  # fmt: skip


def _name_columns(
    ix: SearchIndex, query: str, weights: dict[str, float], names: list[str], cands: np.ndarray
) -> dict[str, np.ndarray]:
    """The candidates' name words against the query's (`NAME_COLUMNS`), in one pass: each
    token is looked up among the candidates' name parts once, and each name's words read once.

    - `name_cover`, `name_extra`: the share of the query's own tokens and mapped name words
      that its name has, and the share of its name's words that the query neither says nor
      maps to (`Circle.instCompactSpace` says all of "CompactSpace Circle", the class
      `CompactSpace` half; `Real.instCompleteSpace` all of "the real numbers are complete");
    - `parts_*`: the mapped words' coverage, its precision, the coverage by reliability, the
      share of the last component's words asked for, the share of the query's groups said.

    A name's words are read only where it has a wanted word (or, for the `parts_*`, a bar,
    which `tokens` reads by its context): elsewhere its words are all extra (1.0 whatever their
    count) and both parts shares are 0 (tokenising every candidate's name cost a third of a
    query's CPU, docs/benchmarks.md `perf45`)."""
    n = len(cands)
    cols = {f: np.zeros(n) for f in NAME_COLUMNS}
    parts = ix.levers.parts
    mapped = list(weights)
    wanted = list(dict.fromkeys([*ix._query_tokens(query), *mapped]))
    if parts is None or not wanted or not n:
        return cols
    groups = query_groups(query, ix.levers.vocabulary_weights, ix.families) if mapped else []
    found = {t: parts.contains(t, cands) for t in wanted}  # groups' words are mapped words
    hits = weighted_sum(found, dict.fromkeys(wanted, 1.0), n)
    said = weighted_sum(found, dict.fromkeys(mapped, 1.0), n)
    own, precision, last = np.ones(n), cols["parts_precision"], cols["parts_last"]
    asked = set(mapped)
    for j, (h, m, name) in enumerate(zip(hits.tolist(), said.tolist(), names, strict=True)):
        bar = bool(mapped) and ("|" in name or "∣" in name)
        if h <= 0 and not bar:
            continue
        words = document_parts(name)
        if h > 0:
            own[j] = max(1, len(words))
        if m > 0 or bar:
            precision[j] = m / max(1, len(words))
            ws = document_parts(name.rsplit(".", 1)[-1])
            last[j] = sum(w in asked for w in ws) / max(1, len(ws))
    cols["name_cover"] = hits / len(wanted)
    cols["name_extra"] = np.maximum(0.0, own - hits) / own
    if mapped:
        cols["parts_coverage"] = said / len(mapped)
        cols["parts_reliable"] = weighted_sum(found, weights, n) / sum(weights.values())
        told = np.zeros(n)
        for g in groups:
            told += weighted_sum(found, dict.fromkeys(g, 1.0), n) > 0
        cols["parts_groups"] = told / max(1, len(groups))
    return cols


def _field_columns(query: str, names: list[str], cols: dict[str, np.ndarray]) -> None:
    """`owner_rank`, `owner_gain`, `dot_field`, `prefix_cover` (`fieldmap.py`), into `cols`:
    the best rank any part gives the candidate's namespace where that is a candidate, and how
    much more of the query its name abbreviates than its namespace's does. `prefix_cover` is
    read of the fields (`kind`) and of the candidates that are a candidate's namespace only
    (0 elsewhere): of every candidate it cost half a millisecond a query."""
    n = len(names)
    best = np.min(np.column_stack([cols[f] for f in BEST_OF]), axis=1) if n else np.zeros(0)
    at = {name: j for j, name in enumerate(names)}
    owner = [at.get(name.rpartition(".")[0], -1) for name in names]
    fields = np.flatnonzero(cols["kind"] == KINDS["field"]).tolist()
    read = sorted({*fields, *(owner[j] for j in fields if owner[j] >= 0)})
    cover = np.zeros(n)
    cover[read] = prefix_cover(query_words(query), [names[j] for j in read])
    cols["owner_rank"] = np.array([best[o] if o >= 0 else RANK_MISSING for o in owner])
    cols["owner_gain"] = np.array([cover[j] - cover[o] if o >= 0 else 0.0
                                   for j, o in enumerate(owner)])  # fmt: skip
    dots = set(dot_names(query))
    cols["dot_field"] = np.array([float(name.rpartition(".")[2] in dots) for name in names])
    cols["prefix_cover"] = cover


def candidate_features(
    ix: SearchIndex, query: str, r: Rankings, fused: dict[int, float]
) -> tuple[np.ndarray, np.ndarray]:
    """(the candidates' positions, their feature rows in `FEATURES` order)."""
    cands = r.candidates()
    cands = np.sort(np.concatenate([cands, extra_fields(ix, query, r, cands, _typed(ix))]))
    n = len(cands)
    cols: dict[str, np.ndarray] = {}
    fused_v = np.array([fused.get(p, 0.0) for p in cands.tolist()])
    order = sorted(fused, key=lambda p: (-fused[p], p))
    cols["fused"] = fused_v
    cols["fused_rank"] = _ranks(np.asarray(order, dtype=np.int64), cands)
    lex = r.lexical_score if r.lexical_score is not None else np.zeros(len(ix))
    cols["lexical"] = lex[cands].astype(np.float64)
    top = float(lex[r.lexical[0]]) if r.lexical is not None and len(r.lexical) else 0.0
    cols["lexical_ratio"] = cols["lexical"] / top if top > 0 else np.zeros(n)
    cols["lexical_rank"] = _ranks(r.lexical, cands)
    for t in TERMS:
        term = r.terms.get(t)
        cols[f"term_{t}"] = term[cands].astype(np.float64) if term is not None else np.zeros(n)
    named = np.asarray([p for p, _ in r.namesakes], dtype=np.int64)
    cols["namesake_rank"] = _ranks(named, cands)
    cover = dict(r.namesakes)
    cols["namesake_cover"] = np.array([cover.get(p, 0.0) for p in cands.tolist()])
    cols["parts_score"] = _at(r.nameparts_score, cands)
    cols["parts_rank"] = _shared(r, "nameparts", cands)
    weights = query_weights(query, ix.levers.vocabulary_weights, ix.families)
    mapped = list(weights)
    names = ix.names_at(cands)
    cols.update(_name_columns(ix, query, weights, names, cands))
    cols["gloss_score"] = _at(r.glosses_score, cands)
    cols["gloss_rank"] = _shared(r, "glosses", cands)
    cols["dense_rank"] = _ranks(r.dense, cands)
    cols["desc_rank"] = _ranks(r.desc, cands)
    cols["coverage"] = ix.coverage(query, cands) if n else np.zeros(0)
    cols["kind"] = _kinds(ix, cands.tolist())
    cols["depth"] = np.array([n_.count(".") for n_ in names], dtype=np.float64)
    cols["name_length"] = np.array([len(n_.rsplit(".", 1)[-1]) for n_ in names], float)
    cols["prior"] = ix.prior[cands].astype(np.float64)
    cols["family_members"], cols["family_member_of"] = _family(names)
    _, share = prose_tokens(query, True, True)
    cols["query_prose"] = np.full(n, share)
    cols["query_tokens"] = np.full(n, float(len(ix._query_tokens(query))))
    cols["query_mapped"] = np.full(n, float(len(mapped)))
    cols["query_latex"] = np.full(n, float(has_latex(query)))
    _field_columns(query, names, cols)
    rows = np.column_stack([cols[f] for f in FEATURES]) if n else np.zeros((0, len(FEATURES)))
    return cands, rows
