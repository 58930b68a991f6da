"""HOL4: a mention per theorem and definition stored in a theory, read from its `*Script.sml`
files, named as the theory stores it — the theory's ML structure and the stored name,
`arithmeticTheory.ADD_COMM` (the theory from `Theory NAME`, else `new_theory "NAME"`, else the
file's name).

The new syntax: `Theorem NAME[attrs]: … Proof … QED`, `Theorem NAME = thm`, `Definition NAME:
… End`, and `Inductive NAME: … End`, which stores `NAME_rules`, `NAME_ind`, `NAME_strongind`
and `NAME_cases` (`CoInductive`: `NAME_rules`, `NAME_coind`, `NAME_cases`), as `IndDefLib`
and `CoIndDefLib` save them. The old one: `store_thm ("NAME", ``…``, tac)` (`Q.store_thm`,
`save_thm`, `prove_thm`), `new_definition`, `new_infixl_definition`, `new_infixr_definition`,
`new_binder_definition`, `new_specification`, `new_axiom` (the name is the first string),
`new_recursive_definition {name = "NAME", …}`, `new_type_definition ("ty", th)` (stored as
`ty_TY_DEF`), `Define`/`zDefine` (stored as `CONST_def`, the constant the first equation
defines), `tDefine`/`xDefine "stem"` (`stem_def`), `Hol_reln` (the four names of the first
rule's relation) and `xHol_reln "stem"`, `Hol_coreln`. The statement is the text between the
header and `Proof` (or `End`), or the first quotation of an old-style call.

A name stored twice in one theory (`[allow_rebind]`) is the last binding, as in the theory;
the earlier one is counted as replaced. What is seen and not stored or not read is counted by
form: `Triviality` and `[local]` theorems (not stored in the theory), `Datatype`s (the
theorems they store are not read), a definition whose stored name math2 cannot read. A
recursive `Define`'s `_ind` theorem (made only when the recursion needs one) is not read.
BSD-3-Clause, limited to mentions by the manifest (K6.6)."""

from __future__ import annotations

import re
from pathlib import Path

from math2.importers.masking import Masked, balanced, mask_ml
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    Parsed,
    SystemReader,
    Unread,
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
# Calls whose first string is the stored name (or its stem), and what they store.
_NAMED = {
    "store_thm": ("theorem", "{}"),
    "save_thm": ("theorem", "{}"),
    "prove_thm": ("theorem", "{}"),
    "new_definition": ("definition", "{}"),
    "new_infixl_definition": ("definition", "{}"),
    "new_infixr_definition": ("definition", "{}"),
    "new_binder_definition": ("definition", "{}"),
    "new_specification": ("definition", "{}"),
    "new_recursive_definition": ("definition", "{}"),
    "new_type_definition": ("definition", "{}_TY_DEF"),
    "new_axiom": ("axiom", "{}"),
    "tDefine": ("definition", "{}_def"),
    "xDefine": ("definition", "{}_def"),
    "xHol_reln": ("inductive", "rules"),
}
# Calls whose stored name is read from the term: the constant (`Define`) or relation defined.
_FROM_TERM = {"Define": "definition", "zDefine": "definition", "Hol_reln": "inductive",
              "Hol_coreln": "coinductive"}  # fmt: skip
_FUNCTIONS = "|".join(sorted({**_NAMED, **_FROM_TERM}, key=len, reverse=True))
_CALL = re.compile(rf"\b(?:[A-Za-z]+\.)?(?P<fn>{_FUNCTIONS})\b(?!')")
_FIRST_STRING = re.compile(rf"\s*\(?\s*\{{?\s*(?:name\s*=\s*)?\"(?P<name>{_NAME})\"")
_DATATYPE = re.compile(r"\b(?:Datatype|Hol_datatype)\b(?!')")
_QUOTATION = re.compile(r"``(.*?)``|`([^`]*)`|“([^”]*)”|‘([^’]*)’", re.S)
_THEORY = re.compile(r"^Theory[ \t]+(\w+)", re.M)
_NEW_THEORY = re.compile(r"\bnew_theory\s*\"(\w+)\"")
_KINDS = {"Theorem": "theorem", "Definition": "definition"}
_RELATION = {"inductive": ("rules", "ind", "strongind", "cases"),
             "coinductive": ("rules", "coind", "cases")}  # fmt: skip
_BINDER = re.compile(r"^\s*(?:\(\s*)*(?:(?:!|∀|\?|∃)[^.]*\.\s*)?(?:\(\s*)*")
_HEAD = re.compile(rf"({_NAME})\s*(\S?)")
_IMPLIES = re.compile(r"==>|⇒")
_CONJ = re.compile(r"/\\|∧")
REPLACED = "binding replaced by a later one of the same name ([allow_rebind])"


def theory_name(path: Path, code: str, structure: str) -> str:
    """`Theory arithmetic`, else `new_theory "arithmetic"`, else the file's name."""
    if m := _THEORY.search(structure):
        return m.group(1)
    if m := _NEW_THEORY.search(code):
        return m.group(1)
    return path.name.removesuffix("Script.sml")


def _top_level(text: str, pattern: re.Pattern[str]) -> list[int]:
    """Offsets of `pattern`'s matches outside brackets."""
    depth, out = 0, []
    for i, c in enumerate(text):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(c, 0)
        if depth == 0 and pattern.match(text, i):
            out.append(i)
    return out


def defined_constant(term: str, relation: bool = False) -> str | None:
    """The constant a definition's first equation defines (`f` of `(f 0 = 1) /\\ …`), or, for
    a relation, the head of the first rule's conclusion (`IndDefLib.name_from_def`); None when
    it is not a plain name (an infix)."""
    first = term[: next(iter(_top_level(term, _CONJ)), len(term))]
    first = first[_BINDER.match(first).end() :]  # type: ignore[union-attr]
    if relation and (imps := _top_level(first, _IMPLIES)):
        first = first[imps[-1] :].lstrip("=>⇒ \n\t")
        first = first[_BINDER.match(first).end() :]  # type: ignore[union-attr]
    m = _HEAD.match(first)
    if m is None:
        return None
    after = m.group(2)
    if not relation and after and not (after.isalnum() or after in "(=:_'[`"):
        return None  # `x ++ y = …`: an infix, whose stored name math2 does not guess
    return m.group(1)


def _statement(view: Masked, start: int, end: int) -> str | None:
    q = _QUOTATION.search(view.code, start, end)
    return clean_statement(next((g for g in q.groups() if g), "")) if q else None


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """The theorems and definitions one theory script stores."""
    view = mask_ml(path, text, quotations=True, sml=True)
    theory = theory_name(path, view.code, view.structure)
    module = f"{theory}Theory"
    rel = path.relative_to(root).as_posix()
    out = Parsed([])

    def add(name: str, kind: str, at: int, stmt: str | None) -> None:
        out.decls.append(Decl(f"{module}.{name}", kind, module, view.line(at), stmt, {"file": rel}))

    for m in _NEW.finditer(view.structure):
        kw, attrs = m.group("kw"), (m.group("attrs") or "").strip("[]")
        if kw == "Triviality":
            out.unread.append(Unread("Triviality (not stored in the theory)", view.line(m.start())))
            continue
        if "local" in [a.strip() for a in attrs.split(",")]:
            out.unread.append(Unread("[local] theorem (not stored)", view.line(m.start())))
            continue
        stmt = None
        if m.group("sep") == ":":
            end = _PROOF_END[kw].search(view.structure, m.end())
            stmt = clean_statement(view.code[m.end() : end.start() if end else m.end()])
        if kw in ("Inductive", "CoInductive"):
            for i, suffix in enumerate(_RELATION[kw.lower()]):
                add(f"{m.group('name')}_{suffix}", kw.lower(), m.start(), stmt if i == 0 else None)
        else:
            add(m.group("name"), _KINDS[kw], m.start(), stmt)
    for m in _CALL.finditer(view.structure):
        fn = m.group("fn")
        if view.code[m.start() : m.end()] != view.structure[m.start() : m.end()]:
            continue  # inside a string or quotation
        call_end = _call_end(view, m.end())
        if fn in _NAMED:
            kind, stored = _NAMED[fn]
            named = _FIRST_STRING.match(view.code, m.end())
            if named is None:
                out.unread.append(
                    Unread(f"{fn} with a name math2 cannot read", view.line(m.start()))
                )
                continue
            stmt = None if fn == "save_thm" else _statement(view, named.end(), call_end)
            if fn == "xHol_reln":
                for i, suffix in enumerate(_RELATION["inductive"]):
                    add(
                        f"{named.group('name')}_{suffix}", kind, m.start(), stmt if i == 0 else None
                    )
            else:
                add(stored.format(named.group("name")), kind, m.start(), stmt)
            continue
        q = _QUOTATION.search(view.code, m.end(), call_end)
        term = next((g for g in q.groups() if g), "") if q else ""
        const = defined_constant(term, relation=fn in ("Hol_reln", "Hol_coreln"))
        if const is None:
            out.unread.append(Unread(f"{fn} with a name math2 cannot read", view.line(m.start())))
            continue
        kind = _FROM_TERM[fn]
        if kind == "definition":
            add(f"{const}_def", kind, m.start(), clean_statement(term))
        else:
            for i, suffix in enumerate(_RELATION[kind]):
                add(f"{const}_{suffix}", kind, m.start(), clean_statement(term) if i == 0 else None)
    for m in _DATATYPE.finditer(view.structure):
        out.unread.append(Unread("Datatype (the theorems it stores)", view.line(m.start())))
    return _last_binding_wins(out)


def _call_end(view: Masked, at: int) -> int:
    """Where an old-style call's arguments end: its closing parenthesis, else the sentence."""
    i = at
    while i < len(view.structure) and view.structure[i].isspace():
        i += 1
    if i < len(view.structure) and view.structure[i] == "(":
        return balanced(view.structure, i)
    end = view.structure.find(";", at)
    return end if end >= 0 else len(view.structure)


def _last_binding_wins(out: Parsed) -> Parsed:
    """A name stored twice in one theory is its last binding (the earlier are counted)."""
    out.decls.sort(key=lambda d: d.line)
    last = {d.name: i for i, d in enumerate(out.decls)}
    kept = []
    for i, d in enumerate(out.decls):
        if last[d.name] == i:
            kept.append(d)
        else:
            out.unread.append(Unread(REPLACED, d.line))
    out.decls = kept
    return out


READER = SystemReader(
    SOURCE, "HOL4 *Script.sml theory files", glob_files("**/*Script.sml"), parse_file
)


def import_hol4(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The HOL4 checkout at its pin (`src/` and `examples/`)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "hol4_dir", "HOL4 checkout", import_hol4))
