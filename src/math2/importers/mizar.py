"""The Mizar Mathematical Library: article headers and theorem labels, as mentions and
crosswalks only (K6.6: formal text with little prose; no text is taken)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session

from math2.errors import InputError
from math2.importers.common import (
    dir_locator,
    file_digest,
    files_under,
    import_once,
    insert_mentions,
    mention_row,
)
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Pin, Source
from math2.util.yamlfile import decode_utf8

SOURCE = "mizar-mml"
_WORD = re.compile(r"\b(theorem|environ|begin|definition|end)\b")
_DEF_LABEL = re.compile(r":\s*(Def\d+)\s*:")


@dataclass
class Article:
    """One `.miz` article."""

    name: str
    title: str | None
    authors: str | None
    theorems: list[tuple[int, str | None, int, str]] = field(default_factory=list)
    definitions: list[tuple[int, str, int]] = field(default_factory=list)


def _strip_comment(line: str) -> str:
    i = line.find("::")
    return line if i < 0 else line[:i]


def parse_article(path: Path) -> Article:
    """Header comments, then `theorem` items numbered in order (ARTICLE:N) and `:DefN:` labels."""
    text = decode_utf8(path.read_bytes(), path)
    lines = text.split("\n")
    header = []
    for line in lines:
        if line.startswith("::"):
            header.append(line[2:].strip())
        elif line.strip():
            break
    header = [h for h in header if h and not set(h) <= {"-", "=", "*"}]
    title = header[0] if header else None
    authors = next((h[3:].strip() for h in header if h.startswith("by ")), None)
    art = Article(name=path.stem.upper(), title=title, authors=authors)
    saw_environ = False
    count = 0
    for no, raw in enumerate(lines, 1):
        line = _strip_comment(raw)
        for m in _WORD.finditer(line):
            if m.group(1) == "environ":
                saw_environ = True
            if m.group(1) != "theorem":
                continue
            count += 1
            rest = line[m.end() :].strip()
            label = rest.split(":", 1)[0].strip() if re.match(r"^\w+\s*:", rest) else None
            statement = rest.split(":", 1)[1].strip() if label else rest
            art.theorems.append((count, label, no, statement))
        for m in _DEF_LABEL.finditer(line):
            art.definitions.append((len(art.definitions) + 1, m.group(1), no))
    if not saw_environ:
        raise InputError(path, 1, "not a Mizar article: no `environ`")
    return art


def import_mizar(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """Every `.miz` under `path` (an MML checkout or its `mml/`)."""
    files = files_under(path, "**/*.miz", ".miz articles")
    return import_once(
        store, entry, path, file_digest(path), lambda: [parse_article(f) for f in files], _write
    )


def _write(s: Session, src: Source, pin: Pin, articles: list[Article]) -> dict[str, int]:
    rows = []
    for a in articles:
        rows.append(
            mention_row(
                src,
                pin,
                a.name,
                kind="article",
                module=a.name,
                docstring=a.title,
                extra={"authors": a.authors},
            )
        )
        for n, label, line, stmt in a.theorems:
            rows.append(
                mention_row(
                    src,
                    pin,
                    f"{a.name}:{n}",
                    kind="theorem",
                    module=a.name,
                    statement=stmt[:2000] or None,
                    extra={"label": label, "line": line},
                )
            )
        for n, label, line in a.definitions:
            rows.append(
                mention_row(
                    src,
                    pin,
                    f"{a.name}:def {n}",
                    kind="definition",
                    module=a.name,
                    extra={"label": label, "line": line},
                )
            )
    ids = insert_mentions(s, rows)
    return {
        "articles": len(articles),
        "theorems": sum(len(a.theorems) for a in articles),
        "definitions": sum(len(a.definitions) for a in articles),
        "mentions": len(ids),
    }


register(ImporterSpec(SOURCE, dir_locator("mizar_dir", "Mizar MML checkout"), import_mizar))
