"""Wiedijk's "Formalizing 100 Theorems" (K6.7, the second crosswalk): facts only.

The page has no licence, so the corpus takes only which of the 100 theorems has a formalization
in which system — never its titles, authors' names or any other text. The page (a saved copy
given by `MATH2_DATA__WIEDIJK_100`, or read by `math2 build` where there is a network) holds
the list as an ordered list of the theorems, each with a nested list of its formalizations,
one item per system: `System, author(s): statement` (or `System: statement`). The system is
the item's text before its first comma or colon; the theorem's number is its place in the
ordered list (the numbering Mathlib's docs/100.yaml uses too).

Each theorem's facts go on its node `w100:N` (`extra.lists["wiedijk-100"]`: the number and the
systems). `share_facts`, run by the build after the clustering pass, copies them to each 1000+
node that names the same Lean declaration as `w100:N` (Mathlib's docs/100.yaml), so the
theorem's facts are on the 1000+ node whatever order the lists were imported in.

A page without versions: its pin is the page as read; a later read that differs replaces the
facts of the earlier one (the old and new digests are in the import's notes).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.errors import InputError
from math2.importers.common import replacing, skip_if_done, source_and_pin
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.importers.theorem_lists import Formalization, ListEntry, write_entries
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Crosswalk, Node
from math2.store.work import Run
from math2.util.files import file_digest

if TYPE_CHECKING:
    from math2.config import Settings

SOURCE = "wiedijk-100"
# An item is `System, author(s): statement` or `System: statement`: the system ends at the
# first comma or colon.
_LABEL_END = re.compile(r"[,:]")
# The page's system names -> math2's (the manifest's systems, and the others the page lists).
SYSTEMS = {
    "isabelle": "isabelle",
    "hol light": "hol-light",
    "hol4": "hol4",
    "coq": "rocq",
    "rocq": "rocq",
    "lean": "lean4",
    "metamath": "metamath",
    "mizar": "mizar",
    "acl2": "acl2",
    "nqthm/acl2": "acl2",
    "nqthm": "acl2",
    "proofpower": "proofpower",
    "pvs": "pvs",
    "megalodon": "megalodon",
    "naproche": "naproche",
    "nuprl": "nuprl",
    "metaprl": "nuprl",
    "nuprl/metaprl": "nuprl",
}


@dataclass
class _El:
    """An element of the page: its tag and its content (text and elements, in order)."""

    tag: str
    line: int
    content: list[str | _El] = field(default_factory=list)

    @property
    def children(self) -> list[_El]:
        return [c for c in self.content if isinstance(c, _El)]

    def own_text(self) -> str:
        """Its text and that of its inline elements, in order, not of nested lists."""
        return "".join(
            c if isinstance(c, str) else c.own_text()
            for c in self.content
            if isinstance(c, str) or c.tag not in ("ul", "ol")
        )


class _Tree(HTMLParser):
    """A tree of the page's lists (`ol`, `ul`, `li`, closing an `li` left open)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _El("root", 1)
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "li" and self.stack[-1].tag == "li":
            self.stack.pop()  # an <li> left open by the next one
        el = _El(tag, self.getpos()[0])
        self.stack[-1].content.append(el)
        if tag not in ("br", "img", "hr", "meta", "link", "input"):
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].content.append(data)


def _walk(el: _El) -> Iterator[_El]:
    yield el
    for c in el.children:
        yield from _walk(c)


@dataclass
class Facts:
    """One theorem of the list: its number and the systems it is formalized in."""

    number: int
    line: int
    systems: list[str]
    unknown: list[str] = field(default_factory=list)  # labels math2 has no system name for


def parse_page(path: Path) -> list[Facts]:
    """The facts of the saved page at `path` (see the module docstring)."""
    from math2.importers.masking import read_source

    text, _ = read_source(path)
    tree = _Tree()
    tree.feed(text)
    tree.close()
    lists = [el for el in _walk(tree.root) if el.tag == "ol"]
    if not lists:
        raise InputError(path, None, "no ordered list of theorems: not the 100 theorems page")
    the_list = max(lists, key=lambda el: sum(c.tag == "li" for c in el.children))
    facts = []
    for n, item in enumerate((c for c in the_list.children if c.tag == "li"), 1):
        systems: list[str] = []
        unknown: list[str] = []
        for sub in (c for c in item.children if c.tag in ("ul", "ol")):
            for f in (c for c in sub.children if c.tag == "li"):
                label = " ".join(_LABEL_END.split(f.own_text(), maxsplit=1)[0].split())
                system = SYSTEMS.get(label.lower())
                if system is None:
                    if label:
                        unknown.append(label)
                    continue
                if system not in systems:
                    systems.append(system)
        facts.append(Facts(n, item.line, systems, unknown))
    return facts


def import_wiedijk(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The facts of a saved copy of the page; a page that differs from the one read before at
    this pin replaces its facts."""
    digest = file_digest(path)
    facts = parse_page(path)
    entries = [
        ListEntry(
            key=f"w100:{f.number}",
            wikidata=None,
            title=None,  # no text of the list is stored
            msc=None,
            path=str(path),
            line=f.line,
            formalizations=[
                Formalization(s, "formalized", None, None, [], [], None) for s in f.systems
            ],
            extra={"number": f.number},
        )
        for f in facts
    ]
    notes = []
    unknown = sorted({u for f in facts for u in f.unknown})
    if unknown:
        notes.append(f"systems math2 has no name for (not recorded): {', '.join(unknown)}")
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    previous = _previous_digest(store, entry)
    if previous is None:
        return write_entries(store, entry, entries, digest, path, notes)
    notes.append(f"the page changed since the last read ({previous[:12]} -> {digest[:12]})")
    with replacing():
        return write_entries(store, entry, entries, digest, path, notes)


def _previous_digest(store: Store, entry: SourceEntry) -> str | None:
    with store.session() as s:
        _, pin = source_and_pin(s, entry.name)
        run = s.scalar(select(Run).where(Run.job == "import", Run.key == f"{entry.name}@{pin.key}"))
        return (
            (run.params or {}).get("digest") if run is not None and run.status == "done" else None
        )


def share_facts(session: Session) -> int:
    """Copy each `w100:N` node's facts to the 1000+ nodes (`wd:…`) that name one of the Lean
    declarations it names; how many nodes carry shared facts. Idempotent."""
    nodes = {n.id: n for n in session.scalars(select(Node).where(Node.key.like("w100:%")))}
    facts = {nid: (n.extra or {}).get("lists", {}).get(SOURCE) for nid, n in nodes.items()}
    facts = {nid: f for nid, f in facts.items() if f}
    if not facts:
        return 0
    edges = session.execute(
        select(Crosswalk.node_id, Crosswalk.target).where(
            Crosswalk.system == "lean4", Crosswalk.status == "accepted"
        )
    ).all()
    decls: dict[str, set[int]] = {}
    for nid, target in edges:
        decls.setdefault(target, set()).add(nid)
    shared = 0
    for nid, f in sorted(facts.items()):
        targets = {t for n, t in edges if n == nid}
        others = {o for t in targets for o in decls.get(t, ()) if o != nid}
        for other in sorted(others):
            node = session.get(Node, other)
            if node is None or not node.key.startswith("wd:"):
                continue
            extra = dict(node.extra or {})
            lists = dict(extra.get("lists") or {})
            mine = {**f, "via": nodes[nid].key}
            if lists.get(SOURCE) != mine:
                lists[SOURCE] = mine
                extra["lists"] = lists
                node.extra = extra
            shared += 1
    session.flush()
    return shared


def _locate(settings: Settings) -> tuple[Path | None, str]:
    p = settings.data.wiedijk_100
    if p and Path(p).is_file():
        return Path(p), ""
    return None, "no saved copy of the page: set MATH2_DATA__WIEDIJK_100"


register(ImporterSpec(SOURCE, _locate, import_wiedijk, fetch="web", data_field="wiedijk_100"))
