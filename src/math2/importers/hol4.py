"""HOL4: a mention per theorem and definition stored in a theory, read from its `*Script.sml`
files — the new syntax (`Theorem NAME[attrs]: … Proof … QED`, `Theorem NAME = thm`,
`Definition NAME: … End`, `Inductive`/`CoInductive NAME: … End`) and the old one
(`store_thm ("NAME", ``…``, tac)`, `Q.store_thm`, `save_thm ("NAME", th)`, `prove_thm`,
`new_definition ("NAME", ``…``)`). The name is the theory's ML structure and the stored name,
`arithmeticTheory.ADD_COMM` (the theory from `Theory NAME`, else `new_theory "NAME"`, else the
file's name); the statement is the text between the header and `Proof` (or `End`), or the
first quotation of an old-style call. `Triviality` and theorems marked `[local]` are not stored
in the theory and are not read. BSD-3-Clause, limited to mentions by the manifest (K6.6)."""

from __future__ import annotations

import re
from pathlib import Path

from math2.importers.masking import balanced, mask_ml
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

SOURCE = "hol4"
_NAME = r"[A-Za-z][A-Za-z0-9_']*"
_NEW = re.compile(
    rf"^(?P<kw>Theorem|Triviality|Definition|Inductive|CoInductive)[ \t]+(?P<name>{_NAME})"
    r"[ \t]*(?P<attrs>\[[^\]\n]*\])?[ \t]*(?P<sep>:|=)",
    re.M,
)
_PROOF_END = {
    "Theorem": re.compile(r"^(Proof|QED)\b", re.M),
    "Triviality": re.compile(r"^(Proof|QED)\b", re.M),
    "Definition": re.compile(r"^(End|Termination)\b", re.M),
    "Inductive": re.compile(r"^End\b", re.M),
    "CoInductive": re.compile(r"^End\b", re.M),
}
_OLD = re.compile(
    r"\b(?:[A-Za-z]+\.)?(?P<fn>store_thm|save_thm|prove_thm|new_definition)\s*\(\s*"
    rf"\"(?P<name>{_NAME})\"\s*,"
)
_QUOTATION = re.compile(r"``(.*?)``|`([^`]*)`|“([^”]*)”|‘([^’]*)’", re.S)
_THEORY = re.compile(r"^Theory[ \t]+(\w+)", re.M)
_NEW_THEORY = re.compile(r"\bnew_theory\s*\"(\w+)\"")
_KINDS = {
    "Theorem": "theorem",
    "Definition": "definition",
    "Inductive": "inductive",
    "CoInductive": "inductive",
    "store_thm": "theorem",
    "save_thm": "theorem",
    "prove_thm": "theorem",
    "new_definition": "definition",
}


def theory_name(path: Path, code: str, structure: str) -> str:
    """`Theory arithmetic`, else `new_theory "arithmetic"`, else the file's name."""
    if m := _THEORY.search(structure):
        return m.group(1)
    if m := _NEW_THEORY.search(code):
        return m.group(1)
    return path.name.removesuffix("Script.sml")


def parse_file(root: Path, path: Path, text: str) -> list[Decl]:
    """The theorems and definitions one theory script stores."""
    view = mask_ml(path, text, quotations=True, sml=True)
    theory = theory_name(path, view.code, view.structure)
    module = f"{theory}Theory"
    rel = path.relative_to(root).as_posix()
    decls = []
    for m in _NEW.finditer(view.structure):
        kw, attrs = m.group("kw"), (m.group("attrs") or "").strip("[]")
        if kw == "Triviality" or "local" in [a.strip() for a in attrs.split(",")]:
            continue  # not stored in the theory
        stmt = None
        if m.group("sep") == ":":
            end = _PROOF_END[kw].search(view.structure, m.end())
            stmt = clean_statement(view.code[m.end() : end.start() if end else m.end()])
        decls.append(_decl(module, m.group("name"), _KINDS[kw], view.line(m.start()), stmt, rel))
    for m in _OLD.finditer(view.code):
        if view.structure[m.start()] == " ":  # inside a string or quotation
            continue
        call_end = balanced(view.structure, view.structure.rfind("(", 0, m.end()))
        quote = _QUOTATION.search(view.code, m.end(), call_end)
        stmt = None
        if quote and m.group("fn") != "save_thm":
            stmt = clean_statement(next((g for g in quote.groups() if g), ""))
        decls.append(
            _decl(module, m.group("name"), _KINDS[m.group("fn")], view.line(m.start()), stmt, rel)
        )
    return sorted(decls, key=lambda d: d.line)


def _decl(module: str, name: str, kind: str, line: int, stmt: str | None, rel: str) -> Decl:
    return Decl(
        name=f"{module}.{name}",
        kind=kind,
        module=module,
        line=line,
        statement=stmt,
        extra={"file": rel},
    )


READER = SystemReader(
    SOURCE, "HOL4 *Script.sml theory files", glob_files("**/*Script.sml"), parse_file
)


def import_hol4(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The HOL4 checkout at its pin (`src/` and `examples/`)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "hol4_dir", "HOL4 checkout", import_hol4))
