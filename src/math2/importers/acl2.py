"""The ACL2 community books: a mention per `defthm` (and `defthmd`, its disabled form) and
`defaxiom` of the `.lisp` books under `books/`. A book is its own world (two books may each
prove a theorem of the same name, with different statements; a `local` lemma is gone once its
book is certified),
so a mention is named by its book and its symbol — `arithmetic/top:ACL2::NAT-LISTP-OF-CONS` —
and nothing is merged across books; the symbol alone, as ACL2 prints it, is kept in
`extra.symbol`: the package the name is written in (`std::foo`), else the book's
`(in-package "…")` at that point, else `ACL2`; names are upper-cased as the reader does, except
`|…|` names. The package is the one the book reads the name in; a symbol the package imports
from another (its home package) cannot be known without running ACL2. A theorem inside
`(local …)` is marked `local` (it is not exported from its book); within one book an exported
theorem wins over a `local` one of the same name, else the first stays (ACL2 takes a redundant
event as the same theorem). The statement is the term after the name. Comments are blanked
and never taken as text (K6.6).

What a book holds and the import does not read is counted by form (`systems.Unread`):
definitions (`defun`, `define`, `defun-sk`, …), macros, theorems made by `defrule`-like macros
and `def-gl-thm`, the theorems `defequiv`/`defcong`/`defrefinement` generate, a `defthm` in a
macro's template (`(defthm ,name …)`: its name is made when the macro expands), and a name a
book states again.

The licence is per directory and per file (K6.3; `books/LICENSE`: "License and copyright
information is provided by individual directories and files"): a book's own header comments
first (`License: A 3-clause BSD license…`, `(An MIT/X11-style license)`, the GNU notices in
either order — "Version 2 of the GNU General Public License" —, or a full MIT text that never
says "MIT"; a header that speaks of a licence without naming one defers to its folder), else
the `LICENSE` (or `LICENSE.txt`, `COPYING`) of the nearest folder above it below
`books/` (whose own `LICENSE` only defers to folders and files),
matched as a whole licence text by `identify` (its SPDX licence texts, within 5% edits) or read
as a statement. A book with neither, or whose licence math2 cannot read, is not imported, and
both are counted."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from math2.importers.masking import mask_lisp
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    ItemLicence,
    Parsed,
    SystemReader,
    Unread,
    clean_statement,
    git_checkout,
    glob_files,
    import_checkout,
    licence_of_statement,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "acl2-books"
THEOREMS = frozenset({"defthm", "defthmd", "defaxiom"})
TEMPLATE = "defthm in a macro's template (named when the macro expands)"
STATED_AGAIN = "a name its book states again (kept once: the exported one, else the first)"
# Forms seen and not read, by their head: definitions, and events that store theorems under
# names math2 would have to make up or whose arguments it does not read.
_DEFINITIONS = (
    "defun", "defund", "defun-nx", "defund-nx", "defun-sk", "defund-sk", "defun-inline",
    "defund-inline", "define", "defchoose", "defstub",
)  # fmt: skip
_MAKERS = ("defrule", "defruled", "defrulel", "defruledl", "defthmr", "defthmdr", "def-gl-thm")
_GENERATORS = ("defequiv", "defcong", "defrefinement")
_UNREAD = {
    **dict.fromkeys(_DEFINITIONS, "defun, define, defun-sk, … (a definition)"),
    **dict.fromkeys(_MAKERS, "defrule, defruled, def-gl-thm, … (a theorem math2 does not read)"),
    **dict.fromkeys(_GENERATORS, "defequiv, defcong, defrefinement (the theorems they make)"),
    "defmacro": "defmacro (a macro)",
}
_PAREN = re.compile(r"[()]")
_HEAD = re.compile(r"\s*([^\s()'\"`,;|]+)")
_SYMBOL = re.compile(r"\s*(\|[^|]*\||[^\s()'\"`,;]+)")
_IN_PACKAGE = re.compile(r"\(\s*in-package\s+\"([^\"]+)\"", re.I)
_LICENCE_WORDS = re.compile(r"licen[cs]e|public domain|GNU General", re.I)
_HEADER_LINES = 150


def _symbol(written: str, package: str) -> str | None:
    """`PKG::NAME` for a symbol as written in package `package`; None for what is not a name
    (a keyword, a backquote template's `,name`)."""
    if written.startswith((",", ":", "`", "#")):
        return None
    pkg, sep, name = written.rpartition("::") if "::" in written else written.rpartition(":")
    if not sep:
        pkg, name = package, written
    name = name[1:-1] if name.startswith("|") and name.endswith("|") else name.upper()
    pkg = pkg.strip("|").upper() if pkg else package
    return f"{pkg}::{name}" if name else None


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """The `defthm`s and `defaxiom`s of one book, and the forms it does not read."""
    view = mask_lisp(path, text)
    code, structure = view.code, view.structure
    packages = [(m.start(), m.group(1).upper()) for m in _IN_PACKAGE.finditer(code)]
    rel = path.relative_to(root).as_posix()
    book = rel.removeprefix("books/").removesuffix(".lisp")
    heads: list[str] = []  # the head of each open form
    out = Parsed([])
    for m in _PAREN.finditer(structure):
        if m.group(0) == ")":
            if heads:
                heads.pop()
            continue
        h = _HEAD.match(structure, m.end())
        head = h.group(1).lower() if h else ""
        if head in THEOREMS and h is not None:
            sym = _SYMBOL.match(code, h.end())
            package = next((p for at, p in reversed(packages) if at < m.start()), "ACL2")
            name = _symbol(sym.group(1), package) if sym else None
            if name is not None and sym is not None:
                out.decls.append(
                    Decl(
                        name=f"{book}:{name}",
                        kind=head,
                        module=book,
                        line=view.line(m.start()),
                        statement=clean_statement(_next_form(code, structure, sym.end())),
                        extra={"file": rel, "local": "local" in heads, "symbol": name},
                    )
                )
            else:
                out.unread.append(Unread(TEMPLATE, view.line(m.start())))
        elif (form := _UNREAD.get(head)) is not None:
            out.unread.append(Unread(form, view.line(m.start())))
        heads.append(head)
    return _one_per_name(out)


def _one_per_name(out: Parsed) -> Parsed:
    """One declaration per name of a book: an exported theorem wins over a `local` one, else
    the first stays; the others are named in `also_at` and counted as not read."""
    kept: dict[str, Decl] = {}
    for d in out.decls:
        first = kept.get(d.name)
        if first is None:
            kept[d.name] = d
            continue
        if first.extra["local"] and not d.extra["local"]:
            d.extra.setdefault("also_at", []).append(f"{first.module}:{first.line}")
            kept[d.name] = d
            out.unread.append(Unread(STATED_AGAIN, first.line))
        else:
            first.extra.setdefault("also_at", []).append(f"{d.module}:{d.line}")
            out.unread.append(Unread(STATED_AGAIN, d.line))
    out.decls = list(kept.values())
    return out


def _next_form(code: str, structure: str, at: int) -> str:
    """The text of the s-expression after offset `at` (a list or an atom)."""
    from math2.importers.masking import balanced

    i = at
    while i < len(structure) and structure[i].isspace():
        i += 1
    if i < len(structure) and structure[i] == "(":
        return code[i : balanced(structure, i)]
    m = re.compile(r"[^\s()]+").match(code, i)
    return m.group(0) if m else ""


def book_licence(root: Path, path: Path, text: str) -> ItemLicence:
    """A book's licence: its header's statement, else its nearest folder's licence file."""
    lines = text.splitlines()[:_HEADER_LINES]
    comment = "\n".join(
        ln.strip().lstrip(";").strip() for ln in lines if ln.lstrip().startswith(";")
    )
    if _LICENCE_WORDS.search(comment) or _MIT_TEXT.search(_one_line(comment)):
        spdx = statement_licence(comment)
        sentence = next(
            (ln for ln in comment.splitlines() if _LICENCE_WORDS.search(ln)),
            "Permission is hereby granted, free of charge, … (the MIT text)",
        )
        if spdx is not None:
            return ItemLicence(spdx, sentence, "stated")
        # words of a licence that name none ("see the LICENSE file"): the folder's, if any
        folder = folder_licence(root, path.parent)
        return folder if folder.spdx else ItemLicence(None, sentence, "unrecognised")
    return folder_licence(root, path.parent)


_MIT_TEXT = re.compile(
    r"Permission is hereby granted, free of charge, to any person obtaining a copy", re.I
)
_GPL_VERSION_FIRST = re.compile(
    r"version\s+(\d)(?:\.\d)?\s+of\s+the\s+GNU\s+(Lesser\s+|Library\s+)?(Affero\s+)?"
    r"General\s+Public\s+Licen[cs]e",
    re.I,
)
_LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING")
# `identify` names the GNU licences by their texts, which do not say "only" or "or later"
_TEXT_IDS = {
    "GPL-2.0": "GPL-2.0-only", "GPL-3.0": "GPL-3.0-only", "LGPL-2.1": "LGPL-2.1-only",
    "LGPL-3.0": "LGPL-3.0-only", "AGPL-3.0": "AGPL-3.0-only",
}  # fmt: skip


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def statement_licence(words: str) -> str | None:
    """The SPDX id of a licence statement as books write it: "Version 2 of the GNU General
    Public License" (the version first), the MIT text without the word MIT, else the shapes
    `systems.licence_of_statement` reads."""
    flat = _one_line(words)
    if m := _GPL_VERSION_FIRST.search(flat):
        kind = "LGPL" if m.group(2) else ("AGPL" if m.group(3) else "GPL")
        minor = "1" if kind == "LGPL" and m.group(1) == "2" else "0"
        later = re.search(r"any later|or later|\(at your option\)", flat, re.I)
        return f"{kind}-{m.group(1)}.{minor}-{'or-later' if later else 'only'}"
    if (spdx := licence_of_statement(flat)) is not None:
        return spdx
    return "MIT" if _MIT_TEXT.search(flat) else None


def folder_licence(root: Path, folder: Path) -> ItemLicence:
    """The licence file of `folder` or the nearest folder above it, below `books/` (whose own
    `LICENSE` only says that folders and files give their terms): the whole text matched by
    `identify`, else read as a statement."""
    top = root / "books" if (root / "books").is_dir() else root
    for at in (folder, *folder.parents):
        if at == top or not at.is_relative_to(top):
            break
        for name in _LICENCE_FILES:
            file = at / name
            if file.is_file():
                return _licence_file(root, file)
    return ItemLicence(None, None, "none stated")


@lru_cache(maxsize=4096)
def _licence_file(root: Path, file: Path) -> ItemLicence:
    from identify.identify import license_id

    where = f"{file.relative_to(root).as_posix()}"
    try:
        spdx = license_id(str(file))
    except (UnicodeDecodeError, OSError):
        spdx = None
    if spdx is not None:
        return ItemLicence(_TEXT_IDS.get(spdx, spdx), f"{where}: the {spdx} text", "folder")
    text = file.read_text("utf-8", errors="replace")
    spdx = statement_licence(text)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return ItemLicence(spdx, f"{where}: {first[:120]}", "folder" if spdx else "unrecognised")


READER = SystemReader(
    SOURCE, "ACL2 books (.lisp under books/)", glob_files("**/*.lisp", under="books"),
    parse_file, book_licence,
)  # fmt: skip


def import_acl2(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The ACL2 checkout (or its `books/`) at its pin, each book with its own licence."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "acl2_books_dir", "ACL2 checkout", import_acl2))
