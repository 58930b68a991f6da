"""The theorem lists as crosswalks (K6.7): the 1000+ theorems list first, then Mathlib's
docs/100.yaml and docs/1000.yaml. Each entry becomes or joins a node keyed by its Wikidata id,
with a same_as edge to each system's declaration and the list as the edge's source."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from math2.config import Settings
from math2.crosswalk.nodes import NodeIndex
from math2.errors import InputError
from math2.importers.common import (
    file_digest,
    finish_run,
    import_transaction,
    refuse_empty,
    skip_if_done,
)
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.util.yamlfile import DuplicateKey, LineDict, decode_utf8, load_yaml, parse_yaml

# 1000+ system blocks -> math2 system names.
SYSTEMS = {
    "lean": "lean4",
    "metamath": "metamath",
    "isabelle": "isabelle",
    "hol_light": "hol-light",
    "rocq": "rocq",
    "coq": "rocq",
    "mizar": "mizar",
}
_WD = re.compile(r"^Q\d+")
# Where a block gives a URL but no identifier, the label can be read off the URL.
_MM_URL = re.compile(r"/mpeuni/([^/]+)\.html$")
_MIZAR_URL = re.compile(r"/html/(\w+)\.html#T(\d+)$")


@dataclass
class Formalization:
    """One entry of a system block."""

    system: str
    status: str | None
    library: str | None
    url: str | None
    identifiers: list[str]
    authors: list[str]
    date: str | None
    derived: bool = False  # identifiers read off the URL


@dataclass
class ListEntry:
    """One theorem of a list."""

    key: str  # node key: wd:Q…(suffix) or w100:N
    wikidata: str | None
    title: str | None
    msc: str | None
    path: str
    line: int
    formalizations: list[Formalization] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _date(value: Any) -> str | None:
    """Dates come as YAML dates, integers (a year) or strings."""
    if value is None:
        return None
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [s.strip() for s in str(value).split(",") if s.strip()]


def _derive_ids(system: str, url: str | None) -> list[str]:
    if not url:
        return []
    if system == "metamath" and (m := _MM_URL.search(url)):
        return [m.group(1)]
    if system == "mizar" and (m := _MIZAR_URL.search(url)):
        return [f"{m.group(1).upper()}:{m.group(2)}"]
    return []


def parse_thm_file(path: Path) -> ListEntry:
    """One `_thm/Q….md` file: YAML front matter between `---` lines, the title a comment."""
    text = decode_utf8(path.read_bytes(), path)
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise InputError(path, 1, "expected YAML front matter starting with ---")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise InputError(path, len(lines), "front matter is not closed with ---") from None
    data, dups = parse_yaml("\n".join(lines[1:end]), path, line_offset=1)
    if dups:
        d = dups[0]
        raise InputError(path, d.line, f"duplicate key {d.key!r} (first at line {d.first_line})")
    if not isinstance(data, LineDict):
        raise InputError(path, 2, "front matter must be a mapping")
    title = lines[1][1:].strip() if len(lines) > 1 and lines[1].startswith("#") else None
    wd = str(data.get("wikidata", ""))
    if not _WD.match(wd):
        raise InputError(path, data.key_lines.get("wikidata", 2), f"bad wikidata id {wd!r}")
    suffix = str(data.get("id_suffix", "") or "")
    entry = ListEntry(
        key=f"wd:{wd}{suffix}",
        wikidata=wd,
        title=title,
        msc=str(data["msc_classification"]) if data.get("msc_classification") else None,
        path=str(path),
        line=1,
        extra={"wikipedia": _strings(data.get("wikipedia_links"))},
    )
    for block, system in SYSTEMS.items():
        items = data.get(block) or []
        if not isinstance(items, list):
            raise InputError(path, data.key_lines.get(block), f"{block}: expected a list")
        for it in items:
            if not isinstance(it, dict):
                raise InputError(path, data.key_lines.get(block), f"{block}: expected mappings")
            ids = _strings(it.get("identifiers"))
            derived = False
            if not ids:
                ids = _derive_ids(system, it.get("url"))
                derived = bool(ids)
            entry.formalizations.append(
                Formalization(
                    system=system,
                    status=it.get("status"),
                    library=it.get("library"),
                    url=it.get("url"),
                    identifiers=ids,
                    authors=_strings(it.get("authors")),
                    date=_date(it.get("date")),
                    derived=derived,
                )
            )
    return entry


def parse_thousand_plus(root: Path) -> list[ListEntry]:
    """Every `_thm/*.md` of a 1000+ checkout (or of the `_thm` folder itself)."""
    folder = root / "_thm" if (root / "_thm").is_dir() else root
    files = sorted(folder.glob("*.md"))
    if not files:
        raise InputError(folder, None, "no _thm/*.md files")
    return [parse_thm_file(f) for f in files]


def parse_mathlib_list(path: Path) -> tuple[list[ListEntry], list[DuplicateKey]]:
    """Mathlib's docs/100.yaml (keys 1…100) or docs/1000.yaml (keys Wikidata ids)."""
    data, dups = load_yaml(path)
    if not isinstance(data, LineDict):
        raise InputError(path, 1, "expected a mapping of entries")
    pairs: list[tuple[Any, Any, int]] = [(k, v, data.key_lines[k]) for k, v in data.items()]
    # A duplicate key is reported, and its first entry kept as an entry of its own.
    pairs += [(d.key, d.first_value, d.first_line) for d in dups]
    entries = []
    for key, val, line in pairs:
        if val is None:
            val = {}
        if not isinstance(val, dict):
            raise InputError(path, line, f"entry {key!r}: expected a mapping")
        skey = str(key)
        if _WD.match(skey):
            wd = _WD.match(skey).group(0)  # type: ignore[union-attr]
            node_key, wikidata = f"wd:{skey}", wd
        else:
            node_key, wikidata = f"w100:{skey}", None
        decls = _strings(val.get("decls")) or _strings(val.get("decl"))
        authors = _strings(val.get("authors")) or _strings(val.get("author"))
        entry = ListEntry(
            key=node_key,
            wikidata=wikidata,
            title=val.get("title"),
            msc=None,
            path=str(path),
            line=line,
            extra={k: v for k, v in (("note", val.get("note")), ("links", val.get("links"))) if v},
        )
        if decls or val.get("url") or authors:
            entry.formalizations.append(
                Formalization(
                    system="lean4",
                    status="formalized" if decls else "external",
                    library="L" if decls else "X",
                    url=val.get("url"),
                    identifiers=decls,
                    authors=authors,
                    date=_date(val.get("date")),
                )
            )
        entries.append(entry)
    return entries, dups


def write_entries(
    store: Store,
    entry: SourceEntry,
    entries: list[ListEntry],
    digest: str,
    path: Path,
    notes: list[str],
) -> ImportResult:
    """Nodes and edges for parsed entries, in one transaction, once per pin and data."""
    refuse_empty(path, len(entries), "list entries", entry.name)
    with import_transaction(store, entry, path, digest) as (s, src, pin, run):
        index = NodeIndex(s)
        facts = 0
        for e in entries:
            node = index.node(
                e.key, selected_by=entry.name, wikidata=e.wikidata, title=e.title, msc=e.msc
            )
            lists = dict(node.extra or {})
            lists.setdefault("lists", {})[entry.name] = {
                "path": e.path,
                "line": e.line,
                **e.extra,
                "formalizations": [
                    {k: v for k, v in f.__dict__.items() if v not in (None, [], False)}
                    for f in e.formalizations
                ],
            }
            node.extra = lists
            for f in e.formalizations:
                if not f.identifiers:
                    facts += 1  # a fact without a declaration: kept on the node only
                for ident in f.identifiers:
                    index.edge(
                        node,
                        f.system,
                        ident,
                        src.id,
                        pin.id,
                        extra={
                            "status": f.status,
                            "library": f.library,
                            "derived_from_url": f.derived,
                        },
                    )
        counts = {
            "entries": len(entries),
            "nodes created": index.created_nodes,
            "edges created": index.created_edges,
            "formalizations without identifier": facts,
            "duplicate keys": sum("duplicate key" in n for n in notes),
        }
        for system in sorted({f.system for e in entries for f in e.formalizations}):
            counts[f"entries with {system}"] = sum(
                1 for e in entries if any(f.system == system for f in e.formalizations)
            )
        finish_run(run, counts)
    return ImportResult(source=entry.name, pin=pin.key, path=str(path), counts=counts, notes=notes)


def import_thousand_plus(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The 1000+ list (a checkout, or its `_thm` folder)."""
    digest = file_digest(path)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    return write_entries(store, entry, parse_thousand_plus(path), digest, path, [])


def import_mathlib_lists(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """docs/100.yaml and docs/1000.yaml from a folder (Mathlib's docs/ or a copy)."""
    files = [path / "100.yaml", path / "1000.yaml"] if path.is_dir() else [path]
    files = [f for f in files if f.exists()]
    if not files:
        raise InputError(path, None, "neither 100.yaml nor 1000.yaml found")
    digest = "".join(file_digest(f) for f in files)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    entries: list[ListEntry] = []
    notes: list[str] = []
    for f in files:
        es, dups = parse_mathlib_list(f)
        entries += es
        notes += [
            f"{f}:{d.line}: duplicate key {d.key!r} (first at line {d.first_line}); "
            "both entries kept"
            for d in dups
        ]
    return write_entries(store, entry, entries, digest, path, notes)


def _locator(data_set: str):
    """Where a list is: a Mathlib checkout's docs/ for Mathlib's lists when one is given, else
    the external data set (`MATH2_DATA__DIR` or the data cache, hash-checked; `math2.data`)."""

    def locate(settings: Settings) -> tuple[Path | None, str]:
        from math2.data import DataMismatch, DataMissing, locate

        docs = Path(settings.data.mathlib_dir or ".") / "docs"
        if (
            data_set == "mathlib-docs"
            and settings.data.mathlib_dir
            and (docs / "100.yaml").exists()
        ):
            return docs, ""
        try:
            return locate(settings, data_set), ""
        except (DataMissing, DataMismatch) as exc:
            return None, str(exc)

    return locate


register(
    ImporterSpec(
        "1000-plus",
        _locator("1000-plus"),
        import_thousand_plus,
        fetch="data",
        data_set="1000-plus",
    )
)
register(
    ImporterSpec(
        "mathlib-theorem-lists",
        _locator("mathlib-docs"),
        import_mathlib_lists,
        fetch="data",
        data_set="mathlib-docs",
    )
)
