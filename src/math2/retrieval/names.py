"""Names as users write them, and the declaration a query names (issue 33 §2 and §5).

**Name keys.** Each declaration gets keys (a BM25 part of its own, `names/`, used only for
lookup): the words of its last name part, stemmed and joined (`Function.Periodic` →
`period`, `Set.powerset` → `powerset`, `orderOf` → `orderof`), the same without a leading
`is`/`has` (`IsCompact` → `iscompact`, `compact`), and every longer suffix of its name
(`functionperiod`, `setpowerset`). `«»` quotes are dropped (`Quiver.Path.«end»` → `end`,
`pathend`, `quiverpathend`). A query's keys are the same joins of each run of one to four
consecutive words (`power set` → `powerset`, `periodic function` → `period`, `function`,
`periodfunction`), and of each identifier it writes (`Function.Periodic f c`).

**The namesake prior.** A declaration whose key is one of the query's is a *namesake*: the
query names it (or, through the notation table, writes its symbol). Its *cover* is the share of
the query's words (stop words aside) the matched key spans, at least a half ("fundamental
theorem of algebra" does not name a `def …fundamental`); a namesake that covers only part of
the query must be a concept (`def`, `structure`, `class`, `inductive`, `abbrev`, …): "squares
are nonnegative" does not name the theorem `CategoryTheory.Square.nonneg`, while "add_comm"
names the theorem `add_comm`. The namesakes with the best cover, concepts first, then fewer
name parts, then the higher prior, are fused into the ranking as a part of their own
(`SearchIndex.namesake_weight`), so the concept itself ranks above the lemmas about it while
those lemmas, found by the other parts, stay right below.

**Renames.** A deprecated declaration with a successor at the pin (`@[deprecated new]`,
`@[deprecated] alias old := new`) is a rename: `renames.npy` maps its position to its
successor's (followed to the end of a chain), and a search shows the successor in its place
(`Hit.renamed_from` names the old name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from math2.lean.syntax import split_identifier
from math2.retrieval.aids import NameIndex
from math2.retrieval.text import fold_accents, stem

# The kinds that *are* a concept (a name users ask for), as stored in `kinds.npy`.
KIND_CODES = {
    "def": 1, "abbrev": 1, "structure": 1, "class": 1, "inductive": 1, "class inductive": 1,
    "irreducible_def": 1, "opaque": 1, "coinductive": 1,
    "theorem": 2, "lemma": 2, "instance": 3, "field": 4, "alias": 5, "axiom": 6,
}  # fmt: skip
CONCEPT = 1
MAX_GRAM = 4
_QUERY_WORD = re.compile(r"[^\W_]+", re.U)
_IDENTIFIER = re.compile(r"[^\W\d][\w'!?₀-₉]*(?:\.(?:«[^»]*»|[^\W\d][\w'!?₀-₉]*))+|«[^»]*»")
_PREFIXES = ("is", "has")


def unquote(name: str) -> str:
    """`Quiver.Path.«end»` → `Quiver.Path.end` (how users write a quoted name part)."""
    return name.replace("«", "").replace("»", "") if "«" in name else name


def _key(words: list[str]) -> str:
    return "".join(stem(w) for w in words)


def name_keys(name: str) -> list[str]:
    """The lookup keys of a declaration name (see the module docstring)."""
    parts = [p for p in unquote(name).split(".") if p]
    if not parts:
        return []
    last = [w for w in split_identifier(fold_accents(parts[-1])) if w]
    keys = [_key(last)]
    if len(last) > 1 and last[0] in _PREFIXES:
        keys.append(_key(last[1:]))
    for k in range(len(parts) - 2, -1, -1):
        words = [w for p in parts[k:] for w in split_identifier(fold_accents(p))]
        keys.append(_key(words))
    return [k for k in dict.fromkeys(keys) if k]


def query_words(query: str) -> list[str]:
    """A query's words in order, lower-cased and split the way names are
    (`Function.Periodic f c` → `function periodic f c`)."""
    out: list[str] = []
    for w in _QUERY_WORD.findall(fold_accents(unquote(query))):
        out += split_identifier(w)
    return out


def query_keys(query: str) -> dict[str, int]:
    """Key → how many of the query's words it spans: every run of one to `MAX_GRAM`
    consecutive words, and every identifier the query writes (its name keys)."""
    words = query_words(query)
    keys: dict[str, int] = {}
    for n in range(1, MAX_GRAM + 1):
        for i in range(len(words) - n + 1):
            k = _key(words[i : i + n])
            keys[k] = max(keys.get(k, 0), n)
    for m in _IDENTIFIER.finditer(unquote(query)):
        n = len(split_identifier(m.group(0)))
        for k in name_keys(m.group(0)):
            keys[k] = max(keys.get(k, 0), n)
    return keys


def kind_codes(kinds: Iterable[str | None]) -> np.ndarray:
    """`kinds.npy`: each declaration's kind as a small code (`KIND_CODES`, 0 for others)."""
    return np.array([KIND_CODES.get(k or "", 0) for k in kinds], dtype=np.uint8)


def renames(names: list[str], successors: dict[int, str], max_hops: int = 5) -> np.ndarray:
    """`renames.npy`: for each position, the position of its successor (−1 where none): a
    deprecated declaration at position `i` names `successors[i]` (as written, resolved inside
    its namespace), followed through deprecated successors up to `max_hops`."""
    index = NameIndex(names)
    direct = np.full(len(names), -1, dtype=np.int64)
    for i, written in successors.items():
        j = index.resolve(written, scope=names[i].rpartition(".")[0])
        if j is not None and j != i:
            direct[i] = j
    out = direct.copy()
    for i in (int(x) for x in np.flatnonzero(direct >= 0)):
        j, hops = int(direct[i]), 0
        while direct[j] >= 0 and hops < max_hops and int(direct[j]) != i:
            j, hops = int(direct[j]), hops + 1
        out[i] = j
    return out
