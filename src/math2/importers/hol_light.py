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
    ItemLicence,
    Parsed,
    SystemReader,
    Unread,
    clean_statement,
    git_checkout,
    import_checkout,
    licence_of_statement,
)
from math2.sources.licences import LicenceError, normalise
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
_TUPLE = rf"{_NAME}(?:\s*,\s*{_NAME})*"
_LIST = rf"\[\s*{_NAME}(?:\s*;\s*{_NAME})*\s*;?\s*\]"
# `let NAME =`, `let A,B,C =`, `let [A; B] =`, `let (A,\n B) =`, `let ([A; B] as X) =` or
# (continuing a `let`) `and NAME =` at the start of a line, then the head of the right side
# (after `time`, an opening parenthesis, or a module path).
_BINDING = re.compile(
    rf"^(?:let[ \t]+(?!rec\b)|and[ \t]+)"
    rf"(?P<names>{_TUPLE}|{_LIST}|\(\s*(?:{_TUPLE}|{_LIST})\s*(?:as\s+{_NAME}\s*)?\))\s*=\s*(?P<rhs>)"
    rf"(?:time\s+)?\(?\s*(?:[A-Z][A-Za-z]*\.)?(?P<head>{_NAME}|\[)",
    re.M,
)
_AS = re.compile(rf"\bas\s+{_NAME}")
_DERIVED = re.compile(r"[A-Z][A-Z0-9_]*")
# HOL Light's convention: a theorem's name is in capitals (`REAL_ADD_SYM`, `DIST_ADD2`); such a
# name bound by any computation (`let A,B = let … in …`, `end_itlist CONJ …`) is a theorem.
_THEOREM_NAME = re.compile(r"[A-Z][A-Z0-9_']*[A-Z0-9_']")
_NOT_THEOREMS = frozenset({"ref", "fun", "function", "new_type_abbrev", "parse_term"})
# Functions of HOL Light's core that return theorems (a lower-case name bound by one is one).
THEOREM_MAKERS = frozenset(
    {
        "define_type_raw", "distinctness", "injectivity", "prove_cases_thm", "lift_function",
        "lift_theorem", "prove_recursive_functions_exist", "prove_inductive_relations_exist",
        "derive_nonschematic_inductive_relations", "cases", "prove_constructors_distinct",
        "prove_constructors_injective", "define_quotient_type",
    }
)  # fmt: skip
# What a value that is not a theorem is, by its name's last word (HOL Light's convention).
_NOT_A_THEOREM_NAME = re.compile(r"(?:^|_)(CONV|CONVS|TAC|TACS|TCL|THEN|THENL|RULE|RULES)$")
_FUNCTION_NAME = {"CONV": "conversion", "CONVS": "conversion", "TAC": "tactic",
                  "TACS": "tactic", "TCL": "tactic", "THEN": "tactic", "THENL": "tactic",
                  "RULE": "rule", "RULES": "rule"}  # fmt: skip
_COMBINATOR = re.compile(r"\b(THENC|ORELSEC|THEN|THENL|ORELSE)\b")
_LET_IN = re.compile(r"\b(let|in)\b")
_BACKQUOTE = re.compile("`")
_SENTENCE_END = re.compile(r";;|^let[ \t]", re.M)
_QUOTE = re.compile(r"`([^`]*)`")
_VALUE_HEAD = re.compile(rf"\s*(?:time\s+)?\(?\s*(?:[A-Z][A-Za-z]*\.)?({_NAME})?")
# A file's licence statement, in its head (its first comment).
_HEAD_CHARS = 2000
_SPDX = re.compile(r"SPDX-License-Identifier:\s*([^\n*]+)")
_LICENCE_WORDS = re.compile(r"\blicen[cs]e\b", re.I)
_SAME_AS_HOL_LIGHT = re.compile(r"same licen[cs]e|same licen[cs]e terms", re.I)
_BARE_GPL = re.compile(r"\bLicen[cs]e:\s*GPL\b(?![- ]?v?\d)", re.I)
# Files read first (a name bound again later is kept once): the core, then what
# Multivariate loads.
_FIRST = ("", "Library", "Multivariate")


def _depth0(value: str, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """`pattern`'s matches in `value` outside brackets."""
    depth = 0
    out: list[re.Match[str]] = []
    if pattern.search(value) is None:
        return out
    for m in re.finditer(r"[()\[\]]|" + pattern.pattern, value):
        if m.group(0) in ("(", "["):
            depth += 1
        elif m.group(0) in (")", "]"):
            depth -= 1
        elif depth == 0:
            out.append(m)
    return out


def _final_body(value: str) -> str:
    """The expression a `let … in …` value ends with (the value itself otherwise)."""
    lets, body = 0, 0
    for m in _depth0(value, _LET_IN):
        lets += 1 if m.group(1) == "let" else -1
        if lets == 0 and m.group(1) == "in":
            body = m.end()
    return value[body:]


def value_kind(whole: str) -> str | None:
    """What a binding's value (the expression a `let … in` ends with) is when it is not a
    theorem, as far as its code says: a `function`, a `conversion` or a `tactic` (combined
    with `THENC`, `THEN`, …, or a conversion not applied to a term); None when it may be a
    theorem."""
    body = whole.lstrip(" \t\n(")
    if re.match(r"(fun|function)\b", body):
        return "function"
    if combined := _depth0(whole, _COMBINATOR):
        return "conversion" if combined[0].group(1).endswith("C") else "tactic"
    head = _VALUE_HEAD.match(body)
    name = head.group(1) if head and head.group(1) else ""
    if re.search(r"(^|_)CONV$", name) and not _depth0(whole, _BACKQUOTE):
        return "conversion"  # a conversion applied to a term is a theorem
    if re.search(r"(^|_)TAC$", name):
        return "tactic"
    return None


def _kind(head: str, names: list[str], value: str) -> tuple[str | None, str | None]:
    """(what a binding with this head and value makes, or None when it is not a theorem;
    what it is then, for the count of forms not read, or None for ML code of no interest)."""
    if head in PROOFS:
        return "theorem", None
    if head in DEFINITIONS:
        return "definition", None
    if head in AXIOMS:
        return "axiom", None
    theorem_like = all(_THEOREM_NAME.fullmatch(n) for n in names)
    value = _final_body(value)
    what = value_kind(value)
    if what is None and (by_name := _NOT_A_THEOREM_NAME.search(names[-1])):
        what = _FUNCTION_NAME[by_name.group(1)]
    if what is not None:
        return None, (f"{what} (not a theorem)" if theorem_like else None)
    body_head = _VALUE_HEAD.match(value.lstrip(" \t\n("))
    final = body_head.group(1) if body_head and body_head.group(1) else head
    if final in THEOREM_MAKERS or head in THEOREM_MAKERS:
        return "derived", None
    # a lower-case name is a theorem's when it is one of a tuple (`let int_abstr,int_rep =
    # SPEC_ALL …`) or has a capital (`num_RECURSION`); a lone `th` or `lemma` is ML scratch
    named = len(names) > 1 or any(c.isupper() for n in names for c in n)
    if named and (final in PROOFS or _DERIVED.fullmatch(head) or _DERIVED.fullmatch(final)):
        return "derived", None  # a theorem made by a derived rule or decision procedure
    if head not in _NOT_THEOREMS and theorem_like:
        return "derived", None
    return None, None


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """The top-level theorem bindings of one `.ml` file."""
    view = mask_ml(path, text, quotations=True, char_literals=True)
    module = path.relative_to(root).as_posix()
    out = Parsed([])
    for m in _BINDING.finditer(view.structure):
        written = _AS.sub("", m.group("names"))
        names = [n.strip() for n in re.split(r"[,;]", written.strip("()[] \n\t")) if n.strip()]
        names = [n.strip("()[] \n\t") for n in names]
        end_m = _SENTENCE_END.search(view.structure, m.end())
        end = end_m.start() if end_m else len(view.code)
        kind, unread = _kind(m.group("head"), names, view.structure[m.start("rhs") : end])
        if kind is None:
            if unread is not None:
                out.unread.append(Unread(unread, view.line(m.start())))
            continue
        quote = _QUOTE.search(view.code, m.end(), end)
        stmt = clean_statement(quote.group(1)) if quote and len(names) == 1 else None
        for name in names:
            if name == "_":
                continue
            out.decls.append(
                Decl(
                    name=name,
                    kind=kind,
                    module=module,
                    line=view.line(m.start()),
                    statement=stmt,
                    extra={"by": m.group("head")},
                )
            )
    return out


def file_licence(root: Path, path: Path, text: str) -> ItemLicence:
    """The licence a file's head states where it states one (`SPDX-License-Identifier: …`,
    `License: GPL …`); the pin's (BSD-2-Clause) where it states none or says "the same
    license as HOL Light". A bare `GPL`, with no version, is `GPL-1.0-or-later`: the GPL's
    own terms let a program that names no version be used under any version."""
    head = text[:_HEAD_CHARS]
    if m := _SPDX.search(head):
        known = [a for a in m.group(1).split(" OR ") if _known(a)]  # a choice: those math2 knows
        spdx = normalise(" OR ".join(known)) if known else None
        return ItemLicence(spdx, m.group(0).strip(), "stated" if spdx else "unrecognised")
    words = _BARE_GPL.search(head) or _LICENCE_WORDS.search(head)
    if words is None or _SAME_AS_HOL_LIGHT.search(head):
        return ItemLicence(None, None, "default")
    line = head[head.rfind("\n", 0, words.start()) + 1 : head.find("\n", words.start())]
    line = line.strip(" (*)\t")
    if _BARE_GPL.search(line):
        return ItemLicence("GPL-1.0-or-later", line)
    spdx = licence_of_statement(head)
    return ItemLicence(spdx, line, "stated" if spdx else "unrecognised")


def _known(expression: str) -> bool:
    try:
        normalise(expression)
    except LicenceError:
        return False
    return True


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


READER = SystemReader(SOURCE, "HOL Light .ml files", _files, parse_file, file_licence)


def import_hol_light(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The HOL Light checkout at its pin (core, Library, Multivariate and the rest)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "hol_light_dir", "HOL Light checkout", import_hol_light))
