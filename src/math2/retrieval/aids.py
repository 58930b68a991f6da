"""Search aids: what people wrote about a declaration elsewhere than in its own docstring.

Aids are indexed in parts of their own (`aids`, `parents`) that only decide which declarations
a query finds; they are never node text, never shown as a declaration's statement or
docstring, and never stored in the corpus (they live only in the index folder).

- `titles` (part `aids`): the sentence a Mathlib module docstring gives a declaration in its
  "Main results" / "Main statements" / "Main theorems" / "Main definitions" section (the
  bullet that names it in backticks), and the titles of the theorem lists' nodes linked to it
  (Mathlib's 100 and 1000+ lists and the 1000+ theorems project: `Node.title` and every title
  in `Node.extra["named_by"]`), and the topic names of Mathlib's two maps of its contents,
  `docs/overview.yaml` and `docs/undergrad.yaml` (`vector space` → `Module`, `dual basis` →
  `Module.Basis.dualBasis`), each with the heading it sits under.
  And the texts the AI-written informal datasets give it (Herald, FrenzyMath's
  mathlib_informal: `SearchAid` rows that `math2.importers.ai_informal` joined to it by name;
  K6.4: a search aid, never node text).
- `parents` (part `parents`): the docstring of the nearest enclosing declaration, the
  namespace or structure a declaration belongs to (`Nat.Prime`'s for `Nat.Prime.two_le`).

Dev-set items are kept out by the caller: `hold_out` names declarations whose list titles are
dropped (a benchmark's title queries must not be found through their own titles), and hidden
docstrings are never used as a parent's aid either.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_MODULE_DOC = re.compile(r"/-!(.*?)-/", re.S)
_MAIN = re.compile(
    r"^#+\s*Main (?:results?|statements?|theorems?|definitions?|declarations?)\b.*$",
    re.I | re.M,
)
_HEADING = re.compile(r"^#+\s", re.M)
_BULLET = re.compile(r"^\s*[*-]\s+", re.M)
_BACKTICK = re.compile(r"`([^`\s]+)`")


def main_result_sentences(text: str) -> list[tuple[list[str], str]]:
    """(names, sentence) for each bullet of a module docstring's main-results sections: the
    names in backticks before the bullet's first colon (or all its names when it has none),
    and the bullet's text without its backticks."""
    out = []
    for doc in _MODULE_DOC.findall(text):
        for m in _MAIN.finditer(doc):
            rest = doc[m.end() :]
            nxt = _HEADING.search(rest)
            section = rest[: nxt.start()] if nxt else rest
            for item in _BULLET.split(section)[1:]:
                item = " ".join(item.split())
                head = item.split(":", 1)[0] if re.search(r"`\s*:", item) else item
                names = [n for n in _BACKTICK.findall(head) if len(n) > 2]
                sentence = item.replace("`", "")
                if names and sentence:
                    out.append((names, sentence))
    return out


def main_results(
    root: Path, files: Iterable[Path] | None = None, label: str = "main results"
) -> dict[str, list[str]]:
    """Short or full name (as written in backticks) → the main-results sentences naming it,
    over every `.lean` file under `root`'s `Mathlib/` (or `root`); the files read are counted
    as a stage named `label`."""
    from math2.importers.lean_source import lean_files
    from math2.util.progress import track

    base = root / "Mathlib" if (root / "Mathlib").is_dir() else root
    found: dict[str, list[str]] = defaultdict(list)
    paths = list(files if files is not None else lean_files(base))
    for path in track(paths, label, unit="files"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "/-!" not in text:
            continue
        for names, sentence in main_result_sentences(text):
            for n in names:
                found[n].append(sentence)
    return dict(found)


TOPIC_MAPS = ("overview.yaml", "undergrad.yaml")


def topic_names(root: Path) -> dict[str, list[str]]:
    """Declaration name → the topics Mathlib's maps of its contents (`docs/overview.yaml`,
    `docs/undergrad.yaml` of the checkout at `root`) give it: the topic with the heading it
    sits under (`dual basis (Duality)`). A map that is absent or unreadable gives nothing."""
    import yaml

    found: dict[str, list[str]] = defaultdict(list)

    def walk(tree: dict, heading: str) -> None:
        for key, value in tree.items():
            if isinstance(value, dict):
                walk(value, str(key))
            elif isinstance(value, str) and value.strip():
                topic = " ".join(str(key).replace("$", " ").split())
                for name in value.split():
                    found[name].append(f"{topic} ({heading})" if heading else topic)

    for file in TOPIC_MAPS:
        try:
            tree = yaml.safe_load((root / "docs" / file).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        if isinstance(tree, dict):
            walk(tree, "")
    return dict(found)


class NameIndex:
    """The index's names, to read a name as written somewhere (a backtick, an alias's target)."""

    def __init__(self, names: list[str]):
        self.names = names
        self.pos = {n: i for i, n in enumerate(names)}
        self.by_last: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(names):
            self.by_last[n.rsplit(".", 1)[-1]].append(i)

    def resolve(self, written: str, scope: str = "") -> int | None:
        """The position of `written` read inside namespace `scope`: the name as written, else
        under `scope`'s namespaces (innermost first, as Lean resolves it), else the unique
        name ending in `.written`; None where none or several."""
        written = written.removeprefix("_root_.")
        parts = scope.split(".") if scope else []
        for k in range(len(parts), -1, -1):
            at = self.pos.get(".".join([*parts[:k], written]))
            if at is not None:
                return at
        last = written.rsplit(".", 1)[-1]
        cands = [j for j in self.by_last.get(last, []) if self.names[j].endswith("." + written)]
        return cands[0] if len(cands) == 1 else None


def resolve(written: dict[str, list[str]], names: list[str]) -> dict[int, list[str]]:
    """Positions of `names` → sentences, a written name matched as a full name or else as the
    unique name ending in `.written`."""
    index = NameIndex(names)
    out: dict[int, list[str]] = defaultdict(list)
    for w, sentences in written.items():
        i = index.resolve(w)
        if i is not None:
            out[i] += sentences
    return out


def list_titles(session, mention_ids: Iterable[int]) -> dict[int, list[str]]:
    """Mention id → the titles of the theorem-list nodes linked to it by a crosswalk."""
    from math2.store import Crosswalk, Node

    wanted = set(mention_ids)
    rows = session.execute(
        select(Crosswalk.mention_id, Node.title, Node.extra)
        .join(Node, Node.id == Crosswalk.node_id)
        .where(Crosswalk.mention_id.is_not(None), Crosswalk.status != "rejected")
    ).all()
    out: dict[int, list[str]] = defaultdict(list)
    for mid, title, extra in rows:
        if mid not in wanted:
            continue
        titles = [title] + [v.get("title") for v in ((extra or {}).get("named_by") or {}).values()]
        for t in titles:
            if t and t not in out[mid]:
                out[mid].append(t)
    return out


def dataset_aids(session: Session, mention_ids: Iterable[int]) -> dict[int, list[str]]:
    """Mention id → the texts the AI-written informal datasets give it (`SearchAid` rows)."""
    from math2.store import SearchAid

    wanted = set(mention_ids)
    out: dict[int, list[str]] = defaultdict(list)
    for mid, body in session.execute(
        select(SearchAid.mention_id, SearchAid.body).order_by(SearchAid.id)
    ):
        if mid in wanted and body not in out[mid]:
            out[mid].append(body)
    return out


def parent_docstrings(names: list[str], docstrings: list[str | None]) -> dict[int, str]:
    """Position → the docstring of the nearest enclosing declaration that has one."""
    doc_of = {n: d for n, d in zip(names, docstrings, strict=True) if d}
    out = {}
    for i, n in enumerate(names):
        parts = n.split(".")
        for k in range(len(parts) - 1, 0, -1):
            d = doc_of.get(".".join(parts[:k]))
            if d:
                out[i] = d
                break
    return out


def collect(
    session,
    ids: list[int],
    names: list[str],
    docstrings: list[str | None],
    mathlib_dir: Path | None,
    hold_out: set[str] | frozenset[str] = frozenset(),
    tag: str = "index",
) -> tuple[dict[int, str], dict[int, str]]:
    """(`titles` aid, `parents` aid) texts by index position (see the module docstring); its
    stages' names start with `tag`."""
    titles: dict[int, list[str]] = defaultdict(list)
    if mathlib_dir is not None and mathlib_dir.is_dir():
        found = main_results(mathlib_dir, label=f"{tag}: main results in module docstrings")
        for i, sentences in resolve(found, names).items():
            titles[i] += sentences
        for i, topics in resolve(topic_names(mathlib_dir), names).items():
            if names[i] not in hold_out:
                titles[i] += topics
    pos = {m: i for i, m in enumerate(ids)}
    for mid, ts in list_titles(session, ids).items():
        if names[pos[mid]] not in hold_out:
            titles[pos[mid]] += ts
    for mid, ts in dataset_aids(session, ids).items():
        if names[pos[mid]] not in hold_out:
            titles[pos[mid]] += ts
    parents = parent_docstrings(names, docstrings)
    return {i: " ".join(dict.fromkeys(ts)) for i, ts in titles.items()}, parents


def mathlib_checkout(settings) -> Path | None:
    """Where the module docstrings are read from: `data.mathlib_dir`, else the checkout `math2
    build` fetched at the manifest's pin (None when neither is here: no main-result aids)."""
    if settings.data.mathlib_dir:
        return Path(settings.data.mathlib_dir)
    from math2.importers.fetch import cached_checkout
    from math2.sources import ManifestError, load_manifest

    try:
        entry = load_manifest(settings.manifest).get("mathlib")
    except (ManifestError, OSError, KeyError):
        return None
    pin = entry.current_pin if entry else None
    if pin is None or not pin.commit:
        return None
    return cached_checkout(Path(settings.data.cache_dir), "mathlib", pin.commit)
