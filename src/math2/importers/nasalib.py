"""NASALib: a mention per PVS theory and per named formula (`LEMMA`, `THEOREM`, `COROLLARY`,
`PROPOSITION`, `AXIOM`, `ASSUMPTION`, …) of each library (a top-level folder of the
checkout), named as PVS qualifies them: `algebra@group` and `algebra@group.fullset_is_group`;
the keyword may stand on the line after the name, and a formula may have type parameters
(`find_first_sound[T:TYPE] : LEMMA`, kept in `extra["parameters"]`). The statement is the
formula up to the next declaration (or a blank line). `%` comments are blanked and never read
as text (K6.6). Declarations of other kinds that carry a keyword (`TYPE`, `VAR`, `JUDGEMENT`,
`CONVERSION`, `AUTO_REWRITE`, `RECURSIVE`, `INDUCTIVE`, …) and formulas outside a theory are
counted as not read; constants declared without a keyword (`f(x: real): real = …`) are not
read and not counted.

A library is a folder of the checkout (`algebra`, `float/axm_bnd`). The licence is per library
(K6.3): the README says that contributions by others carry the licence written in the
library's `top.pvs`; a library whose `top.pvs` (nor that of an enclosing folder) states none
takes the licence in force at the pin, and one whose statement math2 cannot read is not
imported (counted). The source's `authored: mixed` (a CLAUDE.md in the repository, K6.5) is
copied to each mention by `common.mention_row`."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from math2.importers.masking import mask_percent, read_source
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    ItemLicence,
    Parsed,
    SystemReader,
    Unread,
    clean_statement,
    git_checkout,
    import_checkout,
    licence_of_statement,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "nasalib"
FORMULAS = (
    "THEOREM", "LEMMA", "COROLLARY", "PROPOSITION", "CLAIM", "CONJECTURE", "FACT", "LAW",
    "SUBLEMMA", "FORMULA", "OBLIGATION", "AXIOM", "POSTULATE", "ASSUMPTION",
)  # fmt: skip
_ID = r"[A-Za-z][\w?]*"
# `name[T: TYPE] :` then the keyword, on the same line or the next ones (the name at a line's
# start)
_PARAMS = r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
_FORMULA = re.compile(
    rf"^[ \t]*(?P<name>{_ID})\s*(?P<params>{_PARAMS})?\s*:\s*(?P<kw>{'|'.join(FORMULAS)})\b",
    re.M | re.I,
)
# Declarations that are not formulas nor theories: seen, counted, not read.
_OTHER = re.compile(
    rf"^[ \t]*{_ID}(?:[ \t]*,[ \t]*{_ID})*[ \t]*(?:{_PARAMS})?[ \t]*:\s*"
    r"(?P<kw>NONEMPTY_TYPE|TYPE\+?|VAR|RECURSIVE|INDUCTIVE|COINDUCTIVE|MACRO|LIBRARY)(?![\w+])"
    r"|^[ \t]*(?P<bare>JUDGEMENT|CONVERSION[+-]?|AUTO_REWRITE[+-]?)(?![\w+-])",
    re.M | re.I,
)
_THEORY_KW = re.compile(r":\s*(?P<kw>THEORY|DATATYPE|CODATATYPE)\b", re.I)
_KW = "|".join(FORMULAS)
_NOT_A_NAME = r"(?!(?:FORALL|EXISTS|LAMBDA|LET|IF|NOT)\b)"  # `FORALL (x: T):` declares nothing
_NEXT = re.compile(
    rf"\n[ \t]*\n|^[ \t]*{_NOT_A_NAME}{_ID}(?:[ \t]*,[ \t]*{_ID})*[ \t]*"
    rf"(?:\([^()\n]*\)|{_PARAMS})?[ \t]*:(?:[ \t]*(?:[A-Z]+\b|\[)|\s*(?:{_KW})\b)"
    rf"|^[ \t]*{_ID}\s*:\s*(?:{_KW})\b|^[ \t]*(?:END|ENDASSUMING|IMPORTING|EXPORTING)\b",
    re.M,
)
_NAME_BEFORE = re.compile(rf"({_ID})\s*$")
_STATES = re.compile(r"licen[cs]e|\bCC0\b", re.I)


def _theories(code: str) -> list[tuple[int, str, str]]:
    """(offset, name, kind) of each theory or datatype header: `name[params]: THEORY`."""
    out = []
    for m in _THEORY_KW.finditer(code):
        i = m.start() - 1
        while i >= 0 and code[i].isspace():
            i -= 1
        if i >= 0 and code[i] == "]":  # parameters, which may nest brackets
            depth = 0
            while i >= 0:
                depth += {"]": 1, "[": -1}.get(code[i], 0)
                if depth == 0:
                    break
                i -= 1
            i -= 1
        name = _NAME_BEFORE.search(code, 0, i + 1)
        if name is not None:
            out.append((name.start(1), name.group(1), m.group("kw").lower()))
    return out


def _library(root: Path, path: Path) -> str:
    """The PVS library of a file: its folder in the checkout (`algebra`, `float/axm_bnd`)."""
    return path.parent.relative_to(root).as_posix().removeprefix(".")


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """The theories and named formulas of one `.pvs` file."""
    view = mask_percent(path, text)
    lib = _library(root, path)
    rel = path.relative_to(root).as_posix()
    theories = _theories(view.structure)
    decls = [
        Decl(f"{lib}@{name}", "theory" if kind == "theory" else kind, lib, view.line(at),
             extra={"file": rel})
        for at, name, kind in theories
    ]  # fmt: skip
    starts = [at for at, _, _ in theories]
    out = Parsed(decls)
    for m in _OTHER.finditer(view.structure):
        kw = (m.group("kw") or m.group("bare")).upper().rstrip("+-")
        out.unread.append(Unread(f"{kw} declaration", view.line(m.start())))
    for m in _FORMULA.finditer(view.structure):
        k = sum(1 for s in starts if s <= m.start())
        if k == 0:  # a formula outside any theory: not PVS
            out.unread.append(Unread("formula outside a theory", view.line(m.start())))
            continue
        theory = theories[k - 1][1]
        end = _NEXT.search(view.structure, m.end())
        body = view.code[m.end() : end.start() if end else len(view.code)]
        decls.append(
            Decl(
                name=f"{lib}@{theory}.{m.group('name')}",
                kind=m.group("kw").lower(),
                module=f"{lib}@{theory}",
                line=view.line(m.start()),
                statement=clean_statement(body),
                extra={"file": rel, "parameters": m.group("params")}
                if m.group("params")
                else {"file": rel},
            )
        )
    return out


@lru_cache(maxsize=256)
def _library_licence(folder: Path) -> ItemLicence:
    """The licence the head of a library's `top.pvs` states (its comments, read as a fact)."""
    top = folder / "top.pvs"
    if not top.is_file():
        return ItemLicence(None, None, "default")
    text, _ = read_source(top)
    comment = "\n".join(
        ln.strip().lstrip("%").strip() for ln in text.splitlines() if ln.lstrip().startswith("%")
    )
    if not _STATES.search(comment):
        return ItemLicence(None, None, "default")  # none stated: the pin's licence
    sentence = next(ln for ln in comment.splitlines() if _STATES.search(ln))
    spdx = licence_of_statement(comment)
    return ItemLicence(spdx, sentence, "stated" if spdx else "unrecognised")


def _licence(root: Path, path: Path, text: str) -> ItemLicence:
    """The licence of the nearest `top.pvs` up to the top-level library that states one."""
    folder = path.parent
    while folder != root and folder.is_relative_to(root):
        found = _library_licence(folder)
        if found.source != "default":
            return found
        folder = folder.parent
    return ItemLicence(None, None, "default")


def _files(root: Path) -> list[Path]:
    """The `.pvs` files of the libraries (top-level folders)."""
    return sorted(
        p
        for p in root.glob("*/**/*.pvs")
        if p.is_file() and not any(x.startswith(".") for x in p.relative_to(root).parts)
    )


READER = SystemReader(SOURCE, "PVS .pvs files of the libraries", _files, parse_file, _licence)


def import_nasalib(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The NASALib checkout at its pin, each library with its own licence."""
    _library_licence.cache_clear()
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "nasalib_dir", "NASALib checkout", import_nasalib))
