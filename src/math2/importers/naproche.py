"""Naproche: a mention per theorem-like environment (`theorem`, `lemma`, `proposition`,
`corollary`, `definition`, `axiom`, `signature`, starred or not) inside the `forthel` blocks
of the formalizations' `.ftl.tex` files (and their language variants, `.ftl.en.tex`). Text
outside a `forthel` block is the document's prose and is not read. A mention is named by the
file (its path under `math/`, without `.ftl.tex`) and the environment's `\\label` (`examples/
tarski:KT`), else its title in brackets, else its kind and number in the file (`examples/
cantor:theorem 1`); the statement is the environment's ForTheL text with `%` comments blanked.
GPL-3.0: mentions and crosswalks only (K6.6)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from math2.importers.masking import mask_percent
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    SystemReader,
    clean_statement,
    git_checkout,
    glob_files,
    import_checkout,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "naproche"
ENVIRONMENTS = (
    "theorem", "lemma", "proposition", "corollary", "definition", "axiom", "signature"
)  # fmt: skip
_BLOCK = re.compile(r"\\begin\{forthel\}(.*?)\\end\{forthel\}", re.S)
_ENV = re.compile(
    rf"\\begin\{{(?P<env>{'|'.join(ENVIRONMENTS)})(?P<star>\*?)\}}"
    r"(?:\s*\[(?P<title>[^\]]*)\])?(?:\s*\\label\{(?P<label>[^}]*)\})?"
)
_SUFFIX = re.compile(r"\.ftl(\.[a-z]{2})?\.tex$")


def _title(options: str) -> str | None:
    """`[Cantor]`, or the `title=` of key-value options (`[title=10.i,for=two]`)."""
    if "=" in options:
        kv = dict(p.split("=", 1) for p in options.split(",") if "=" in p)
        options = kv.get("title", "")
    return options.strip() or None


def parse_file(root: Path, path: Path, text: str) -> list[Decl]:
    """The theorem-like environments of the `forthel` blocks of one file."""
    view = mask_percent(path, text, tex=True)
    base = root / "math" if (root / "math").is_dir() else root
    rel = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name
    module = _SUFFIX.sub("", rel)
    numbers: Counter[str] = Counter()
    used: Counter[str] = Counter()
    decls = []
    for block in _BLOCK.finditer(view.code):
        for m in _ENV.finditer(view.code, block.start(1), block.end(1)):
            env = m.group("env")
            numbers[env] += 1
            end = view.code.find(f"\\end{{{env}{m.group('star')}}}", m.end(), block.end(1))
            body = view.code[m.end() : end if end >= 0 else block.end(1)]
            title = _title(m.group("title") or "")
            label = (m.group("label") or "").strip() or None
            key = label or title or f"{env} {numbers[env]}"
            used[key] += 1
            if used[key] > 1:  # a title used twice in one file
                key = f"{key} ({used[key]})"
            decls.append(
                Decl(
                    name=f"{module}:{key}",
                    kind=env,
                    module=module,
                    line=view.line(m.start()),
                    statement=clean_statement(body),
                    extra={"title": title, "label": label, "file": rel},
                )
            )
    return decls


READER = SystemReader(
    SOURCE,
    "ForTheL .ftl.tex files",
    glob_files("**/*.ftl.tex", "**/*.ftl.??.tex", under="math"),
    parse_file,
)


def import_naproche(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The Naproche checkout at its pin (its `math/` formalizations)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "naproche_dir", "Naproche checkout", import_naproche))
