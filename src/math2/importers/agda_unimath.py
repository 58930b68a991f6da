"""agda-unimath (literate `.lagda.md`): a mention per definition, prose as open text under MIT
with the notice, and `{{#concept … WDID=Q… Agda=…}}` macros as crosswalks keyed by Wikidata."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session

from math2.crosswalk.nodes import NodeIndex
from math2.errors import InputError
from math2.importers.common import (
    dir_locator,
    file_digest,
    files_under,
    import_once,
    insert_mentions,
    insert_prose,
    mention_row,
)
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Pin, Source
from math2.util.yamlfile import decode_utf8

SOURCE = "agda-unimath"
_FENCE = re.compile(r"^```(\w*)\s*$")
_MODULE = re.compile(r"^module\s+([\w.-]+)")
_SIG = re.compile(r"^\s*(?:data\s+|record\s+)?([^\s:;(){}]+)\s*:(?!=)")
_CONCEPT = re.compile(r"\{\{#concept\s+\"([^\"]+)\"([^}]*)\}\}")
_ATTR = re.compile(r"(\w+)=(\"[^\"]*\"|\S+)")
_TAG = re.compile(r"<summary>.*?</summary>|<[^>]+>")
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
DEFAULT_NOTICE = "MIT License; see the LICENSE file of agda-unimath for the copyright notice"


@dataclass
class Definition:
    """A top-level Agda name with its signature and the prose section it sits in."""

    name: str
    signature: str
    line: int
    section: str | None


@dataclass
class Concept:
    """A `{{#concept}}` macro."""

    label: str
    wikidata: str | None
    agda: str | None
    line: int


@dataclass
class LiterateModule:
    """One `.lagda.md` file."""

    module: str
    path: str
    title: str | None
    definitions: list[Definition] = field(default_factory=list)
    prose: list[tuple[str | None, str]] = field(default_factory=list)  # (section, text)
    concepts: list[Concept] = field(default_factory=list)


def parse_module(path: Path) -> LiterateModule:
    """Split a literate file into prose and Agda blocks; read names, prose and concepts."""
    text = decode_utf8(path.read_bytes(), path)
    lines = text.split("\n")
    in_code: str | None = None
    in_postulate = False
    pending_module = False
    sig_open: Definition | None = None
    open_line = 0
    section: str | None = None
    title = None
    module = None
    prose_buf: list[str] = []
    mod = LiterateModule(module="", path=str(path), title=None)

    def flush() -> None:
        # <details><summary>Imports</summary> wrappers are layout, not prose.
        kept = [ln for ln in prose_buf if _TAG.sub("", ln).strip() or not ln.strip()]
        body = _CONCEPT.sub(lambda m: m.group(1), "\n".join(kept)).strip()
        if body:
            mod.prose.append((section, body))
        prose_buf.clear()

    for no, line in enumerate(lines, 1):
        fence = _FENCE.match(line)
        if fence and in_code is None:
            flush()
            in_code, open_line = fence.group(1) or "text", no
            continue
        if fence and in_code is not None and not fence.group(1):
            in_code = None
            continue
        if in_code == "agda":
            top = bool(line) and not line[0].isspace()
            if top or not line.strip():
                sig_open = None
            if top:
                in_postulate = line.strip() == "postulate"
            if module is None and pending_module and line.strip():
                module, pending_module = line.split()[0], False
            elif module is None and line.strip() == "module":
                pending_module = True  # `module` alone: the name is on the next line
            elif module is None and (m := _MODULE.match(line)):
                module = m.group(1)
            elif sig_open is not None and not top and line.strip() and not in_postulate:
                # a signature continued on indented lines
                sig_open.signature = f"{sig_open.signature} {line.strip()}"
                continue
            elif (
                (top or in_postulate)
                and not line.lstrip().startswith("--")
                and (m := _SIG.match(line))
            ):
                name = m.group(1)
                if name not in (
                    "module",
                    "open",
                    "import",
                    "private",
                    "abstract",
                    "infixl",
                    "infixr",
                    "infix",
                    "postulate",
                    "instance",
                    "where",
                    "_",
                ):
                    sig_open = Definition(name, line.strip(), no, section)
                    mod.definitions.append(sig_open)
                continue
            continue
        if in_code is not None:
            continue
        if (h := _HEADING.match(line)) is not None:
            flush()
            level, heading = len(h.group(1)), h.group(2)
            if level == 1 and title is None:
                title = heading
            else:
                section = heading
            continue
        for c in _CONCEPT.finditer(line):
            attrs = {k: v.strip('"') for k, v in _ATTR.findall(c.group(2))}
            mod.concepts.append(Concept(c.group(1), attrs.get("WDID"), attrs.get("Agda"), no))
        prose_buf.append(line)
    if in_code is not None:
        raise InputError(path, open_line, "code block opened here is never closed")
    flush()
    if module is None:
        raise InputError(path, 1, "no `module … where` line in any agda block")
    mod.module, mod.title = module, title
    return mod


def _notice(root: Path) -> str:
    lic = next(
        (root / n for n in ("LICENSE", "LICENSE.md", "LICENSE.txt") if (root / n).is_file()), None
    )
    if lic is not None:
        first = [
            ln.strip(" #*") for ln in lic.read_text(errors="replace").splitlines() if ln.strip()
        ]
        copyright_line = next((ln for ln in first if ln.lower().startswith("copyright")), None)
        if copyright_line:
            return f"MIT License, {copyright_line}"
    return DEFAULT_NOTICE


def import_agda_unimath(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """Every `.lagda.md` under `path` (a checkout at the pin, or its `src/`)."""
    from math2.importers.systems import checkout_commit

    checkout_commit(path, entry)  # a checkout at another commit is refused
    files = files_under(path, "**/*.lagda.md", ".lagda.md files")
    notice = _notice(path if any(path.glob("LICENSE*")) else path.parent)

    def write(s: Session, src: Source, pin: Pin, modules: list[LiterateModule]) -> dict[str, int]:
        rows, texts_for = [], []
        for mod in modules:
            rows.append(
                mention_row(
                    src,
                    pin,
                    mod.module,
                    kind="module",
                    module=mod.module,
                    docstring=mod.title,
                    extra={"path": mod.path},
                )
            )
            # Each prose section once: on the first definition under it, else on the module.
            first_under: dict[str, str] = {}
            for d in mod.definitions:
                if d.section:
                    first_under.setdefault(d.section, d.name)
            module_texts = [t for sec, t in mod.prose if not sec or sec not in first_under]
            texts_for.append(module_texts)
            for d in mod.definitions:
                rows.append(
                    mention_row(
                        src,
                        pin,
                        f"{mod.module}.{d.name}",
                        kind="definition",
                        module=mod.module,
                        statement=d.signature,
                        extra={"line": d.line, "section": d.section},
                    )
                )
                own = d.section and first_under.get(d.section) == d.name
                texts_for.append([t for sec, t in mod.prose if own and sec == d.section])
        ids = insert_mentions(s, rows)
        n_texts = insert_prose(
            s,
            src,
            pin,
            "prose",
            (
                (mid, body, f"agda-unimath, {row['name']}; {notice}", "agda-unimath contributors")
                for mid, row, bodies in zip(ids, rows, texts_for, strict=True)
                for body in bodies
            ),
        )
        index = NodeIndex(s)
        edges = 0
        for mod in modules:
            for c in mod.concepts:
                if not c.wikidata:
                    continue
                node = index.node(
                    f"wd:{c.wikidata}", selected_by=entry.name, wikidata=c.wikidata, title=c.label
                )
                target = f"{mod.module}.{c.agda}" if c.agda else mod.module
                edges += index.edge(
                    node, "agda", target, src.id, pin.id, extra={"concept": c.label, "line": c.line}
                )
        return {
            "modules": len(modules),
            "mentions": len(ids),
            "texts": n_texts,
            "concepts with Wikidata id": edges,
        }

    modules = lambda: [parse_module(f) for f in files]  # noqa: E731 (read after the skip check)
    return import_once(store, entry, path, file_digest(path), modules, write)


register(
    ImporterSpec(
        SOURCE,
        dir_locator("agda_unimath_dir", "agda-unimath checkout"),
        import_agda_unimath,
        fetch="git",
        data_field="agda_unimath_dir",
    )
)
