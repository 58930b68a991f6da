"""Vocabulary mined from the library's own prose: a phrase → name-word table (issue 33 §4).

The hand-written English rows (`english.py`) say `divides` → `dvd`; Mathlib's docstrings say
far more, in its authors' words: the lemmas named `…nhds…` speak of "neighborhoods", those
named `…tendsto…` of what "converges", those named `…det…` of the "determinant". At index
time (`mine`) each documented declaration is one *unit*: the phrases of its docstring (one or
two consecutive content words, stemmed: stop words, code in backticks and words under three
letters out; its first `MAX_WORDS` content words) against the words of its name's last two
parts (`Filter.Tendsto.mono_left` → `tendsto`, `mono`, `left`); each bullet of a module
docstring that starts with a name in backticks (`` * `nhds x`: the neighbourhood filter ``) is
a unit too, of the bullet's phrases against that name's words. A phrase `g` and a name word `w`
that are not the same word are paired when they meet in at least `MIN_UNITS` units and their
Dice coefficient 2·n(g, w) / (n(g) + n(w)) is at least `MIN_DICE`; generic name words (`has`,
`of`, `mk`, `apply`, `theory`, …) are never a translation. A phrase keeps its `KEEP` best words.
Measured at the pin: `neighborhood` → `nhds`, `converge` → `tendsto`, `infimum` → `inf`,
`cardinality` → `card`, `determinant` → `det`, `kullback leibler` → `kl`, `greatest lower` →
`glb`, `preimage` → `comap`.

The table (`vocabulary.json` beside the index) gives, for the phrases of a query's prose, their
name words as Mathlib words with their Dice coefficient as the pair's reliability (issue 45 §1:
`weighted`); the name-part matching (`nameparts.query_weights`) counts a word by it, so a
pairing that holds in one unit of five weighs a fifth of one that always holds. Docstrings
held out of an index never feed it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from math2.lean.syntax import split_identifier
from math2.retrieval.aids import NameIndex
from math2.retrieval.text import STOPWORDS, fold_accents, stem

FILE = "vocabulary.json"
MAX_PHRASE = 2
MAX_WORDS = 40
MIN_UNITS = 3
MIN_DICE = 0.2
KEEP = 2
_CODE = re.compile(r"`+[^`]*`+|\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z][a-z]+(?:-[a-z]+)*")
_BULLET = re.compile(r"^\s*[*-]\s+`([^`]+)`\s*[:,\-–—]?\s*(.+)$", re.M)
_MODULE_DOC = re.compile(r"/-!(.*?)-/", re.S)
_EXTRA = "the this that with from for are any all each some such which where when also given"
_EXTRA += " let we our see note here used use using defined define definition lemma theorem"
_EXTRA += " version statement result proof type types term terms"
_EXTRA_STOP = frozenset(_EXTRA.split())
# Name words that say how a declaration is built, not what it is about.
_HOW = "has is of to mk apply def within at on theory aux spec coe iff eq and or not the"
_HOW += " mathlib inst instance self left right cases rec ext"
_GENERIC = frozenset(stem(w) for w in _HOW.split())


def content_words(text: str) -> list[str]:
    """The stemmed content words of prose, in order (code spans out)."""
    words = [w.lower() for w in _WORD.findall(fold_accents(_CODE.sub(" ", text)))]
    return [stem(w) for w in words if len(w) >= 3 and w not in STOPWORDS and w not in _EXTRA_STOP]


def phrases(words: list[str], longest: int = MAX_PHRASE) -> list[str]:
    """Every run of one to `longest` consecutive words, joined by spaces."""
    return [
        " ".join(words[i : i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)
    ]


def name_words(name: str) -> set[str]:
    """The stemmed words of a name's last two parts, generic ones out."""
    parts = name.replace("«", "").replace("»", "").split(".")[-2:]
    words = {stem(w) for p in parts for w in split_identifier(p) if len(w) > 1}
    return words - _GENERIC - STOPWORDS


Table = dict[str, list[tuple[str, float]]]


def mine(names: list[str], docstrings: list[str | None], module_docs: Iterable[str] = ()) -> Table:
    """The phrase → name words table (see the module docstring). `docstrings` are those the
    index may use (held-out ones None); `module_docs` the text of each module docstring."""
    units: list[tuple[set[str], set[str]]] = []
    for name, doc in zip(names, docstrings, strict=True):
        if doc:
            units.append((set(phrases(content_words(doc)[:MAX_WORDS])), name_words(name)))
    index = NameIndex(names)
    for text in module_docs:
        for m in _BULLET.finditer(text):
            j = index.resolve(m.group(1).split()[0].lstrip("@"))
            if j is not None:
                units.append((set(phrases(content_words(m.group(2))[:MAX_WORDS])),
                              name_words(names[j])))  # fmt: skip
    n_g: Counter[str] = Counter()
    n_w: Counter[str] = Counter()
    for said, named in units:
        n_g.update(said)
        n_w.update(named)
    n_gw: Counter[tuple[str, str]] = Counter()
    for said, named in units:
        common = [x for x in named if n_w[x] >= MIN_UNITS]
        for p in said:
            if n_g[p] >= MIN_UNITS:
                own = set(p.split())
                n_gw.update((p, x) for x in common if x not in own)
    best: dict[str, list[tuple[float, str]]] = {}
    for (p, word), n in n_gw.items():
        dice = 2 * n / (n_g[p] + n_w[word])
        if n >= MIN_UNITS and dice >= MIN_DICE:
            best.setdefault(p, []).append((dice, word))
    return {
        p: [(w, round(dice, 3)) for dice, w in sorted(ws, reverse=True)[:KEEP]]
        for p, ws in sorted(best.items())
    }


def module_docstrings(root: Path) -> list[str]:
    """The module docstrings (`/-! … -/`) of every `.lean` file under `root`'s `Mathlib/`."""
    from math2.importers.lean_source import lean_files

    base = root / "Mathlib" if (root / "Mathlib").is_dir() else root
    out: list[str] = []
    for path in lean_files(base):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "/-!" in text:
            out += _MODULE_DOC.findall(text)
    return out


class Vocabulary:
    """The mined table, read by a query: `words(query)` → the name words its prose's phrases
    stand for."""

    def __init__(self, table: Table):
        self.table = table

    def weighted(self, query: str) -> dict[str, float]:
        """The (stemmed) name words the query's phrases stand for, longest phrases first, each
        once, with the reliability of its best pairing."""
        out: dict[str, float] = {}
        for p in reversed(phrases(content_words(query))):
            for w, dice in self.table.get(p, ()):
                out[w] = max(out.get(w, 0.0), dice)
        return out

    def words(self, query: str) -> list[str]:
        return list(self.weighted(query))

    def save(self, folder: Path) -> None:
        (folder / FILE).write_text(json.dumps(self.table, ensure_ascii=False, sort_keys=True))

    @classmethod
    def load(cls, folder: Path) -> Vocabulary | None:
        """The table beside an index; one written before reliabilities were kept (a word
        alone) reads each word at reliability 1."""
        path = folder / FILE
        if not path.exists():
            return None
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls({p: [(w, 1.0) if isinstance(w, str) else (str(w[0]), float(w[1]))
                        for w in ws] for p, ws in raw.items()})  # fmt: skip
