"""HOL Light (with Multivariate): a mention per theorem bound at the top level of an `.ml`
file — `let NAME = prove(`…`, TAC);;` and its friends (`prove_by_refinement`, `TAC_PROOF`,
Mizar Light's `theorem` and miz3's `thm`), a theorem a derived rule makes (`let NAME =
REAL_ARITH `…`;;`, `let A,B = CONJ_PAIR …`), and the definitions and axioms (`new_definition`,
`define`, `new_recursive_definition`, `new_inductive_definition` with its three theorems,
`new_axiom`, …) — over as many lines as the binding takes. A theorem's name is global in HOL
Light, so the name is the mention's name and the file its module; a name bound again in a
later file (an example reloading a lemma) is kept once, the core and Multivariate first. The
statement is the first term quotation of the binding. BSD-2-Clause, limited to mentions by the
manifest (K6.6: comments are never text)."""

from __future__ import annotations

import re
from pathlib import Path

from math2.importers.masking import mask_ml
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    SystemReader,
    clean_statement,
    git_checkout,
    import_checkout,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "hol-light"
PROOFS = frozenset(
    {
        "prove", "prove_by_refinement", "TAC_PROOF", "PROVE", "prove_thm", "theorem", "thm",
        "inner_space_prove", "full_inner_space_prove",
    }
)  # fmt: skip
DEFINITIONS = frozenset(
    {
        "new_definition", "define", "new_recursive_definition", "new_basic_definition",
        "new_specification", "new_inductive_definition", "new_infix_definition",
        "new_type_definition", "define_type", "NewDefinition", "new_binary_definition",
    }
)  # fmt: skip
AXIOMS = frozenset({"new_axiom", "NewAxiom"})
_NAME = r"[A-Za-z_][A-Za-z0-9_']*"
# `let NAME =`, `let A,B,C =`, `let [A; B] =` or (continuing a `let`) `and NAME =` at the
# start of a line, then the head of the right side
# (after `time`, an opening parenthesis, or a module path).
_BINDING = re.compile(
    rf"^(?:let[ \t]+(?!rec\b)|and[ \t]+)"
    rf"(?P<names>{_NAME}(?:\s*,\s*{_NAME})*|\[\s*{_NAME}(?:\s*;\s*{_NAME})*\s*\])\s*=\s*"
    rf"(?:time\s+)?\(?\s*(?:[A-Z][A-Za-z]*\.)?(?P<head>{_NAME}|\[)",
    re.M,
)
_DERIVED = re.compile(r"[A-Z][A-Z0-9_]*")
# HOL Light's convention: a theorem's name is in capitals (`REAL_ADD_SYM`, `DIST_ADD2`); such a
# name bound by any computation (`let A,B = let … in …`, `end_itlist CONJ …`) is a theorem.
_THEOREM_NAME = re.compile(r"[A-Z][A-Z0-9_']*[A-Z0-9_']")
_NOT_THEOREMS = frozenset({"ref", "fun", "function", "new_type_abbrev", "parse_term"})
_SENTENCE_END = re.compile(r";;|^let[ \t]", re.M)
_QUOTE = re.compile(r"`([^`]*)`")
# Files read first (a name bound again later is kept once): the core, then what
# Multivariate loads.
_FIRST = ("", "Library", "Multivariate")


def _kind(head: str, names: list[str]) -> str | None:
    """What a binding with this head makes, or None when it is not a theorem."""
    if head in PROOFS:
        return "theorem"
    if head in DEFINITIONS:
        return "definition"
    if head in AXIOMS:
        return "axiom"
    if _DERIVED.fullmatch(head) and any(c.isupper() for n in names for c in n):
        return "derived"  # a theorem made by a derived rule or decision procedure
    if head not in _NOT_THEOREMS and all(_THEOREM_NAME.fullmatch(n) for n in names):
        return "derived"
    return None


def parse_file(root: Path, path: Path, text: str) -> list[Decl]:
    """The top-level theorem bindings of one `.ml` file."""
    view = mask_ml(path, text, quotations=True, char_literals=True)
    module = path.relative_to(root).as_posix()
    decls = []
    for m in _BINDING.finditer(view.structure):
        names = [n.strip() for n in re.split(r"[,;]", m.group("names").strip("[] \n\t"))]
        kind = _kind(m.group("head"), names)
        if kind is None:
            continue
        end_m = _SENTENCE_END.search(view.structure, m.end())
        end = end_m.start() if end_m else len(view.code)
        quote = _QUOTE.search(view.code, m.end(), end)
        stmt = clean_statement(quote.group(1)) if quote and len(names) == 1 else None
        for name in names:
            if name == "_":
                continue
            decls.append(
                Decl(
                    name=name,
                    kind=kind,
                    module=module,
                    line=view.line(m.start()),
                    statement=stmt,
                    extra={"by": m.group("head")},
                )
            )
    return decls


def _order(root: Path, path: Path) -> tuple[int, str]:
    parts = path.relative_to(root).parts
    folder = parts[0] if len(parts) > 1 else ""
    return (_FIRST.index(folder) if folder in _FIRST else len(_FIRST), path.as_posix())


def _files(root: Path) -> list[Path]:
    found = [
        p
        for p in root.rglob("*.ml")
        if p.is_file() and not any(x.startswith(".") for x in p.relative_to(root).parts)
    ]
    return sorted(found, key=lambda p: _order(root, p))


READER = SystemReader(SOURCE, "HOL Light .ml files", _files, parse_file)


def import_hol_light(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The HOL Light checkout at its pin (core, Library, Multivariate and the rest)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "hol_light_dir", "HOL Light checkout", import_hol_light))
