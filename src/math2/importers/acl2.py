"""The ACL2 community books: a mention per `defthm` (and `defthmd`, its disabled form) of the
`.lisp` books under `books/`, named with its package as ACL2 prints a symbol —
`ACL2::NAT-LISTP-OF-CONS`, `STD::…`: the package the name is written in (`std::foo`), else the
book's `(in-package "…")` at that point, else `ACL2`; names are upper-cased as the reader does,
except `|…|` names. The package is the one the book reads the name in; a symbol the package
imports from another (its home package) cannot be known without running ACL2. A theorem inside
`(local …)` is marked `local` (it is not exported from its book). The statement is the term
after the name. Comments are blanked and never taken as text (K6.6).

The licence is per file (K6.3): ACL2's LICENSE covers every file except the books, so each book
is read with the licence its own header comments state (`License: A 3-clause BSD license…`,
`(An MIT/X11-style license)`, the GNU notices); a book that states none, or one math2 cannot
read, is not imported, and both are counted."""

from __future__ import annotations

import re
from pathlib import Path

from math2.importers.masking import mask_lisp
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    ItemLicence,
    SystemReader,
    clean_statement,
    git_checkout,
    glob_files,
    import_checkout,
    licence_of_statement,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "acl2-books"
THEOREMS = frozenset({"defthm", "defthmd"})
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


def parse_file(root: Path, path: Path, text: str) -> list[Decl]:
    """The `defthm`s of one book."""
    view = mask_lisp(path, text)
    code, structure = view.code, view.structure
    packages = [(m.start(), m.group(1).upper()) for m in _IN_PACKAGE.finditer(code)]
    rel = path.relative_to(root).as_posix()
    book = rel.removeprefix("books/").removesuffix(".lisp")
    heads: list[str] = []  # the head of each open form
    decls = []
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
                decls.append(
                    Decl(
                        name=name,
                        kind=head,
                        module=book,
                        line=view.line(m.start()),
                        statement=clean_statement(_next_form(code, structure, sym.end())),
                        extra={"file": rel, "local": "local" in heads},
                    )
                )
        heads.append(head)
    return decls


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
    """The licence a book's header comments state (the first lines' `;` comments)."""
    lines = text.splitlines()[:_HEADER_LINES]
    comment = "\n".join(
        ln.strip().lstrip(";").strip() for ln in lines if ln.lstrip().startswith(";")
    )
    if not _LICENCE_WORDS.search(comment):
        return ItemLicence(None, None, "none stated")
    sentence = next(ln for ln in comment.splitlines() if _LICENCE_WORDS.search(ln))
    spdx = licence_of_statement(comment)
    return ItemLicence(spdx, sentence, "stated" if spdx else "unrecognised")


READER = SystemReader(
    SOURCE, "ACL2 books (.lisp under books/)", glob_files("**/*.lisp", under="books"),
    parse_file, book_licence,
)  # fmt: skip


def import_acl2(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The ACL2 checkout (or its `books/`) at its pin, each book with its own licence."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "acl2_books_dir", "ACL2 checkout", import_acl2))
