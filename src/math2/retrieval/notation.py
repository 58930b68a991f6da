"""Notation read from the library itself: which symbols stand for which constant (issue 33 §3).

`read_table` reads every notation command of a Lean checkout (`importers.lean_notation`:
`notation`, `notation3`, `infix…`, `prefix`, `postfix`, `macro_rules`, scoped or not) at index
time and maps each notation's symbol (its first atom that is not punctuation: `⁻¹'`, `𝓝`,
`∀ᶠ`, `→L[`, `ℵ₀`, `𝒫`, `⨆`) to the constants it unfolds to, resolved against the index's
names inside the namespace it was declared in (`preimage` in `namespace Set` → `Set.preimage`).
Left out: `local` notation (one file's abbreviation), a single Greek or ASCII letter (`η`,
`δ`: far more often a variable than the notation), notation whose right-hand side names no
constant, and the symbols of Lean's core that `text.py`'s own table reads (`≤`, `×`, `•`,
`∑`: Mathlib re-declares some of them for special purposes, `binrel%`, scoped actions). A
symbol keeps its two most frequent constants, a scoped notation counting a third of a global
one (`•` is `HSMul.hSMul` everywhere and something else inside one namespace).

The commands are those the import stored (`store.NotationRecord`, read by the same scan as
the declarations), or, for a store imported before it kept them, read from the checkout again.
The table is stored beside the index (`notation.json`). A text's symbols (longest match first)
add the symbol as a token and the constant's words and whole name (`f ⁻¹' s` → `⁻¹'`,
`set.preimage`, `set`, `preimag`), in documents (statement and body) and queries alike, so a
query written with `Set.preimage` meets a statement written with `⁻¹'` and one written with
`⁻¹'` meets the lemmas about it. LaTeX in a query is mapped onto the same table by a small
hand-written table (`LATEX`: `\\mathcal{P}` → `𝒫`, `\\aleph_0` → `ℵ₀`, `\\bigvee` → `⨆`) or,
where Mathlib has no symbol for it, onto the constant itself (`\\overline{s}` → `closure`,
`f'(x)` → `deriv`, `^{(n)}` → `iteratedDeriv`, `\\zeta_n` → `IsPrimitiveRoot`); a primed
name that is not applied (`s'`) is a Lean variable, not a derivative.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from math2.importers.lean_notation import variable_letter
from math2.retrieval.aids import NameIndex
from math2.retrieval.text import SYMBOLS as CORE_SYMBOLS

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from math2.store import NotationRecord

FILE = "notation.json"
SCOPED_FILE = "notation_scoped.json"
KEEP = 2  # constants kept per symbol
_KEYWORDS = ("notation", "infix", "prefix", "postfix", "macro_rules")

# LaTeX → a Lean symbol of the table, or a constant's name where Mathlib writes none.
LATEX: list[tuple[str, str]] = [
    (r"\\mathcal\s*\{?\s*P\s*\}?", "𝒫"),
    (r"\\aleph_?\{?0\}?|\\aleph_\{?0\}?", "ℵ₀"),
    (r"\\mathfrak\s*\{?\s*c\s*\}?", "𝔠"),
    (r"\\mathcal\s*\{?\s*O\s*\}?", "𝓞"),
    (r"\\mathbb\s*\{?\s*A\s*\}?", "𝔸"),
    (r"\\mathbb\s*\{?\s*H\s*\}?", "ℍ"),
    (r"\\bigvee|\\bigsqcup", "⨆"),
    (r"\\bigwedge|\\bigsqcap", "⨅"),
    (r"\\mathcal\s*\{?\s*N\s*\}?", "𝓝"),
    (r"\\overline\s*\{?", "closure"),
    (r"\\bar\s*\{?", "closure"),
    (r"(?<![\w\\])[a-zA-Z]''\s*\(", "deriv iteratedDeriv"),
    (r"(?<![\w\\])[a-zA-Z]'\s*\(", "deriv"),
    (r"\^\s*\{\s*\(\s*[a-z0-9]+\s*\)\s*\}", "iteratedDeriv"),
    (r"\\zeta_\s*\{?\s*[a-z0-9]+", "IsPrimitiveRoot"),
    (r"\\partial", "∂"),
    (r"\\triangle|\\ominus", "∆"),
    (r"\\hookrightarrow", "↪"),
    (r"\\twoheadrightarrow", "↠"),
    (r"\\cong", "≃"),
]
_LATEX_RULES = [(re.compile(p), s) for p, s in LATEX]


@dataclass
class NotationTable:
    """Symbol → the constants it stands for (full names where they resolved); `scoped`: the
    symbols Mathlib declares only as `scoped` notation (`⇒` is `Relator.LiftFun` only where
    `Relator` is open), which name no declaration for a query that opens nothing."""

    symbols: dict[str, list[str]] = field(default_factory=dict)
    scoped: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        by_first: dict[str, list[str]] = defaultdict(list)
        for s in sorted(self.symbols, key=len, reverse=True):
            by_first[s[0]].append(s)
        self._by_first = dict(by_first)
        chars = "".join(sorted(by_first))
        self._starts = re.compile(f"[{re.escape(chars)}]") if chars else None

    def find(self, text: str) -> list[str]:
        """The symbols of `text`, longest match first at each place, left to right."""
        if self._starts is None or not text:
            return []
        out: list[str] = []
        at = 0
        while m := self._starts.search(text, at):
            i = m.start()
            hit = next((s for s in self._by_first[text[i]] if text.startswith(s, i)), None)
            if hit is None:
                at = i + 1
                continue
            out.append(hit)
            at = i + len(hit)
        return out

    def constants(self, text: str) -> list[str]:
        """The constants the symbols of `text` stand for, each once."""
        return list(dict.fromkeys(c for s in self.find(text) for c in self.symbols[s]))

    def tokens(self, text: str, tokenize: Callable[[str], list[str]]) -> list[str]:
        """Index tokens for the notation in `text`: each symbol, then `tokenize` of the names
        of the constants it stands for."""
        found = list(dict.fromkeys(self.find(text)))
        if not found:
            return []
        names = " ".join(c for s in found for c in self.symbols[s])
        return found + tokenize(names)

    def named(self, text: str) -> list[str]:
        """The constants the symbols of `text` name as a namesake: global notation only."""
        found = [s for s in self.find(text) if s not in self.scoped]
        return list(dict.fromkeys(c for s in found for c in self.symbols[s]))

    def save(self, folder: Path) -> None:
        (folder / FILE).write_text(json.dumps(self.symbols, ensure_ascii=False, sort_keys=True))
        (folder / SCOPED_FILE).write_text(json.dumps(sorted(self.scoped), ensure_ascii=False))

    @classmethod
    def load(cls, folder: Path) -> NotationTable | None:
        path = folder / FILE
        if not path.exists():
            return None
        scoped = folder / SCOPED_FILE
        only = json.loads(scoped.read_text(encoding="utf-8")) if scoped.exists() else []
        return cls(json.loads(path.read_text(encoding="utf-8")), frozenset(only))


class Declared(Protocol):
    """A notation command as the library declares it: a scanned `lean_notation.Notation`, or
    the row its import stored (`store.NotationRecord`)."""

    @property
    def symbol(self) -> str | None: ...
    @property
    def constants(self) -> Sequence[str]: ...
    @property
    def namespace(self) -> str: ...
    @property
    def scoped(self) -> bool: ...
    @property
    def local(self) -> bool: ...


def read_table(root: Path, names: list[str], label: str = "notation") -> NotationTable:
    """The notation table of the Lean checkout at `root` (its `Mathlib/` when there is one),
    constants resolved against `names`; the files read are counted as a stage named `label`.
    A store whose import recorded the library's notation gives the same table without reading
    the checkout (`table_of` over its rows)."""
    from math2.errors import InputError
    from math2.importers.lean_source import lean_files, scan_file
    from math2.util.progress import track

    base = root / "Mathlib" if (root / "Mathlib").is_dir() else root

    def found() -> Iterator[Declared]:
        for path in track(list(lean_files(base)), label, unit="files"):
            text = path.read_text(encoding="utf-8", errors="replace")
            if not any(k in text for k in _KEYWORDS):
                continue
            try:
                yield from scan_file(root, path).notations
            except InputError:
                continue  # a file the lexer cannot read gives no notation

    return table_of(found(), names)


def stored_notation(session: Session, source_id: int) -> list[NotationRecord] | None:
    """The notation commands the import of this source at its current pin stored, in the
    library's file order; None when it stored none (an import from before they were kept, or
    a route that reads no source)."""
    from math2.store.notations import current_notations

    return current_notations(session, source_id=source_id) or None


def table_of(declared: Iterable[Declared], names: list[str]) -> NotationTable:
    """The notation table of these commands (in the library's file order), constants resolved
    against `names`."""
    index = NameIndex(names)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    unscoped: set[str] = set()
    for n in declared:
        symbol = n.symbol
        if n.local or symbol is None or variable_letter(symbol) or not n.constants:
            continue
        if symbol in CORE_SYMBOLS:
            continue
        written = n.constants[0]
        at = index.resolve(written, scope=n.namespace)
        counts[symbol][names[at] if at is not None else written] += 1 if n.scoped else 3
        if not n.scoped:
            unscoped.add(symbol)
    return NotationTable(
        {s: [c for c, _ in cs.most_common(KEEP)] for s, cs in counts.items()},
        frozenset(counts) - unscoped,
    )


def latex_notation(query: str) -> str:
    """The Lean symbols and constants the query's LaTeX stands for (`LATEX`), space-separated."""
    if "\\" not in query and "'" not in query and "^" not in query:
        return ""
    return " ".join(dict.fromkeys(s for rx, s in _LATEX_RULES if rx.search(query)))
