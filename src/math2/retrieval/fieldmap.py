"""A structure's or class's fields beside the query's candidates, for the learned ranker
(issue 45, kind `field`; branch fields46, chosen after reading the `fields` dev set's misses).

A field is asked for by what its structure is about and what its own name says ("the adjacency
relation of a simple graph": `SimpleGraph.Adj`), but its document is a type (`α → β` for
`Equiv.toFun`) and seldom a docstring: no part finds it, while its structure is found. So:

- `extra_fields`: the fields of the concepts some part ranks high join the candidates
  (`Equiv` found → `Equiv.toFun`, `Equiv.invFun`, …), and the fields a query reaches by a
  variable's dot (`e.toFun`, `F.obj X`: every field named `toFun`, `obj`), so that the ranker
  may order them;
- the columns the ranker reads of them (`features.py`): `owner_rank`, the best rank any part gives
  the candidate's namespace where that is a candidate (a field of a structure the parts rank high),
  `dot_field`, whether its last component is what the query reaches by a dot, and
  `prefix_cover`, the share of the query's words that a word of its name abbreviates
  (`fun` → "function", `adj` → "adjacency", `iso` → "isomorphism"; `prefix_cover`).

The map of fields is read from the index's kinds (`kinds.npy`, `names.KIND_CODES`) and names
once per open index, where the ranker first asks for it (a fusion search never reads it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from math2.retrieval.names import CONCEPT, KIND_CODES
from math2.retrieval.stage import sorted_unique
from math2.retrieval.text import STOPWORDS

if TYPE_CHECKING:
    from math2.retrieval.index import SearchIndex
    from math2.retrieval.stage import Rankings

FIELD = KIND_CODES["field"]
# The concepts whose fields join the candidates: those in some part's top this many (the
# fields of every concept among the candidates made them 1.3 × as many, of those in a top 25
# 1.08 ×, of a top 10 1.03 ×, for the same nDCG@10 within noise: docs/benchmarks.md, fields46).
OWNER_TOP = 10
# At most this many fields join for one dot-reached name (`x.val`: every structure's `val`).
MAX_DOT = 64
# `e.toFun`, `F.obj X`, `u.inv`, `s.val`: a one-letter variable (a prime or a subscript digit
# after it) and the name after its dot, of two characters or more; not `Equiv.toFun` (a name),
# `h.1`, nor an abbreviation's letters ("a.e.", "i.e.", "e.g.": review of fields46, M2).
_DOT = re.compile(r"(?<![\w.'])[^\W\d_][₀-₉'0-9]?\.([^\W\d][\w'!?₀-₉]+)")
_WORD = re.compile(r"[^\W\d_]+")
MIN_ABBREVIATION = 3  # a name word this long or longer may stand for a query word it begins


@dataclass(frozen=True)
class FieldMap:
    """The index's fields by owner (`Equiv` → positions of `Equiv.toFun`, …) and by last
    component (`toFun` → positions of every field so named)."""

    by_owner: dict[str, list[int]]
    by_last: dict[str, list[int]]


_MAPS: WeakKeyDictionary[SearchIndex, FieldMap] = WeakKeyDictionary()


def field_map(ix: SearchIndex) -> FieldMap:
    """The index's `FieldMap`, read once per open index (empty for an index without kinds)."""
    found = _MAPS.get(ix)
    if found is not None:
        return found
    kinds = ix.levers.kinds if (ix.levers.folder / "kinds.npy").exists() else None
    owners: dict[str, list[int]] = {}
    lasts: dict[str, list[int]] = {}
    if kinds is not None:
        positions = np.flatnonzero(np.asarray(kinds) == FIELD)
        for p, name in zip(positions.tolist(), ix.names_at(positions), strict=True):
            owner, _, last = name.rpartition(".")
            if owner:
                owners.setdefault(owner, []).append(p)
                lasts.setdefault(last, []).append(p)
    made = FieldMap(owners, lasts)  # lists: 3,334 small arrays cost as much again to make
    _MAPS[ix] = made
    return made


def dot_names(query: str) -> list[str]:
    """The names a query reaches by a variable's dot (`e.toFun` → `toFun`)."""
    return list(dict.fromkeys(_DOT.findall(query)))


def extra_fields(
    ix: SearchIndex,
    query: str,
    r: Rankings,
    cands: np.ndarray,
    types: Callable[[list[int]], list[bool]] | None = None,
) -> np.ndarray:
    """The fields not among `cands` (`r.candidates()`, ascending) of the concepts in some
    part's top `OWNER_TOP` and those the query reaches by a dot, ascending. `types`: which of
    some positions are structures or classes (the ranker's cached kinds, `features._types`):
    only their names are read (a name read from the mapped file costs; most concepts are
    definitions, which have no fields)."""
    fm = field_map(ix)
    if not fm.by_owner or not len(cands):
        return np.zeros(0, dtype=np.int64)
    top = np.concatenate(r.tops(OWNER_TOP))
    concepts = sorted_unique(top[np.asarray(ix.levers.kinds)[top] == CONCEPT])
    if types is not None and len(concepts):
        concepts = concepts[np.asarray(types(concepts.tolist()), dtype=bool)]
    found = [p for n in ix.names_at(concepts) for p in fm.by_owner.get(n, ())]
    found += [p for n in dot_names(query) for p in fm.by_last.get(n, [])[:MAX_DOT]]
    if not found:
        return np.zeros(0, dtype=np.int64)
    every = sorted_unique(np.asarray(found, dtype=np.int64))
    at = np.minimum(np.searchsorted(cands, every), len(cands) - 1)
    new: np.ndarray = every[cands[at] != every]
    return new


def query_words(query: str) -> list[str]:
    """The query's words a name may abbreviate (lower case, no stopwords, distinct)."""
    words = (w.lower() for w in _WORD.findall(query))
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and len(w) >= 2))


def prefix_cover(words: list[str], names: list[str]) -> np.ndarray:
    """Per name: the share of `words` (`query_words`) that one of its words (`split_words`)
    begins or is (`fun` → "function", `adj` → "adjacency"; `re` only "re": a word shorter than
    `MIN_ABBREVIATION` must be the query's word; a plural its singular: `elems` "elements").
    A name is split only where it holds a query word's first letters (every word that says one
    does), as splitting every candidate's name cost a tenth of a query's CPU."""
    out = np.zeros(len(names))
    if not words:
        return out
    # a name word → the query words it says, as bits; a word that begins none says nothing
    said = dict.fromkeys([q[:k] for q in words for k in range(MIN_ABBREVIATION, len(q) + 1)], 0)
    said.update(dict.fromkeys(words, 0))
    for w in said:
        short = len(w) < MIN_ABBREVIATION
        said[w] = sum(
            1 << i for i, q in enumerate(words) if q == w or (not short and q.startswith(w))
        )
    probes = re.compile("|".join(re.escape(q[:MIN_ABBREVIATION]) for q in words), re.I)
    for j, name in enumerate(names):
        if not probes.search(name):
            continue
        mask = 0
        for w in split_words(name):
            mask |= said.get(w, 0)
            if len(w) > MIN_ABBREVIATION and w[-1] == "s":  # `elems`: what `elem` begins
                mask |= said.get(w[:-1], 0)
        out[j] = mask.bit_count()
    return out / len(words)


# A name's words by case (`toFun` → `to` `Fun`, `HTMLParser` → `HTML` `Parser`); one regex,
# not `syntax.split_identifier`: every candidate's name is split, and that cost 0.2 ms a query.
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_A-Za-z]+")


@lru_cache(maxsize=1 << 16)
def split_words(name: str) -> tuple[str, ...]:
    """A name's words, lower case, each once (`Equiv.toFun` → `equiv to fun`)."""
    return tuple(dict.fromkeys(w.lower() for w in _WORDS.findall(name)))
