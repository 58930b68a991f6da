"""Names as users write them, and the declaration a query names (issue 33 §2 and §5).

**Name keys.** Each declaration gets keys (a BM25 part of its own, `names/`, used only for
lookup): the words of its last name part, lower-cased, plural endings off (`singular`) and
joined (`Function.Periodic` → `periodic`, `Set.powerset` → `powerset`, `orderOf` →
`orderof`), the same without a leading `is`/`has` (`IsCompact` → `iscompact`, `compact`), and
every longer suffix of its name (`functionperiodic`, `setpowerset`). `«»` quotes are dropped
(`Quiver.Path.«end»` → `end`, `pathend`, `quiverpathend`). A query's keys are the same joins
of each run of one to four consecutive words, each pair also reversed (`power set` →
`powerset`, `periodic functions` → `periodic`, `function`, `periodicfunction`,
`functionperiodic`), and the keys of each identifier it writes (`Function.Periodic f c`), each
with the number of words it spans.

**The namesake prior.** A declaration whose key is one of the query's is a *namesake*: the
query names it (or, through the notation table, writes its symbol). Its *cover* is the share of
the query's words (stop words aside) the matched key spans, at least a half ("fundamental
theorem of algebra" does not name a `def …fundamental`). A namesake that covers only part of
the query must be a concept (`def`, `structure`, `class`, `inductive`, `abbrev`, …) at the
root of the library: "compact set" names `IsCompact`, but "multiplicative order" does not
name `PowerSeries.order` and "squares are nonnegative" not the theorem `Square.nonneg`, while
"add_comm" names the theorem `add_comm`. The namesakes, best cover first, then concepts, then
fewer name parts, then the higher prior (five at most), are fused into the ranking as a part
of their own at `SearchIndex.namesake_weight` × cover, so the concept itself ranks above the
lemmas about it while those lemmas, found by the other parts, stay right below.

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
from math2.retrieval.text import fold_accents

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


def singular(word: str) -> str:
    """A word without an English plural ending (`groups` → `group`, `categories` →
    `category`): all the normalisation a key gets. A stemmer would merge `multiplicative` with
    `multiplicity` and `periodic` with `period`, names Mathlib keeps apart."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _key(words: list[str]) -> str:
    return "".join(singular(w) for w in words)


def _spans(name: str) -> list[tuple[str, int]]:
    """(key, how many words it spans) of a name (see `name_keys`)."""
    parts = [p for p in unquote(name).split(".") if p]
    if not parts:
        return []
    last = [w for w in split_identifier(fold_accents(parts[-1])) if w]
    out = [(_key(last), len(last))]
    if len(last) > 1 and last[0] in _PREFIXES:
        out.append((_key(last[1:]), len(last) - 1))
    for k in range(len(parts) - 2, -1, -1):
        words = [w for p in parts[k:] for w in split_identifier(fold_accents(p))]
        out.append((_key(words), len(words)))
    return [(k, n) for k, n in out if k]


def name_keys(name: str) -> list[str]:
    """The lookup keys of a declaration name (see the module docstring)."""
    return list(dict.fromkeys(k for k, _ in _spans(name)))


def query_words(query: str) -> list[str]:
    """A query's words in order, lower-cased and split the way names are
    (`Function.Periodic f c` → `function periodic f c`)."""
    out: list[str] = []
    for w in _QUERY_WORD.findall(fold_accents(unquote(query))):
        out += split_identifier(w)
    return out


def query_keys(query: str) -> dict[str, int]:
    """Key → how many of the query's words it spans: every run of one to `MAX_GRAM`
    consecutive words, each pair also in reverse order ("periodic function" meets
    `Function.Periodic`), and the keys of every identifier the query writes."""
    words = query_words(query)
    keys: dict[str, int] = {}

    def add(key: str, n: int) -> None:
        keys[key] = max(keys.get(key, 0), n)

    for n in range(1, MAX_GRAM + 1):
        for i in range(len(words) - n + 1):
            add(_key(words[i : i + n]), n)
            if n == 2:
                add(_key(words[i : i + 2][::-1]), 2)
    for m in _IDENTIFIER.finditer(unquote(query)):
        for k, n in _spans(m.group(0)):
            add(k, n)
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
