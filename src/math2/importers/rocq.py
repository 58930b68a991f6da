"""Rocq's standard library: a mention per `Theorem`, `Lemma`, `Definition`, `Fixpoint`,
`Inductive`, `Record`, `Class`, `Instance`, `Axiom`, `Parameter`, … of the `.v` files under
`theories/`, named by its logical path (`Stdlib.Arith.PeanoNat.Nat.add_comm`: the library's
prefix from `theories/dune` or `_CoqProject`, the file's folders and name, then the enclosing
`Module`s; a `Section` adds nothing to a name), with its statement (the binders and type; a
definition's body is left out). LGPL-2.1: mentions and crosswalks only, no comment is read as
text (K6.6). Declarations inside a `Module Type` are kept, marked `module_type` (they are
specifications, not constants); section-local `Let`, `Variable`, `Hypothesis` are not
declarations of the library and are not read."""

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
    import_checkout,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "rocq-stdlib"
THEOREMS = frozenset({"Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Property"})
DEFINITIONS = frozenset(
    {
        "Definition", "Example", "Fixpoint", "CoFixpoint", "Function", "Inductive",
        "CoInductive", "Variant", "Record", "Structure", "Class", "Instance",
    }
)  # fmt: skip
ASSUMPTIONS = frozenset({"Axiom", "Axioms", "Parameter", "Parameters", "Conjecture"})
# Words that may come before the keyword of a command.
_PREFIXES = frozenset(
    {
        "Local", "Global", "Polymorphic", "Monomorphic", "Program", "Cumulative",
        "NonCumulative", "Private", "Export", "#[global]", "#[local]", "#[export]",
    }
)  # fmt: skip
_END = re.compile(r"(?<![.])\.(?=\s|$)")
_IDENT = re.compile(r"[^\W\d][\w']*")
_ATTRIBUTE = re.compile(r"#\[")
_BULLETS = re.compile(r"^[\s\-+*{}]*")
_ASSIGN = re.compile(r":=")
# `<: S with Module E := M.E` and `with Definition t := u` constrain a module type: not a body.
_WITH = re.compile(r"\bwith\s+(?:Module|Definition)\s+[\w.']+\s*:=\s*[\w.'@]+")


def _library_prefix(root: Path) -> tuple[Path, str]:
    """The folder of the library's `.v` files and its logical prefix (`Stdlib`)."""
    base = root / "theories" if (root / "theories").is_dir() else root
    dune = base / "dune"
    if dune.is_file() and (m := re.search(r"\(name\s+([\w.]+)\)", dune.read_text("utf-8"))):
        return base, m.group(1)
    project = base / "_CoqProject"
    if project.is_file():
        m = re.search(r"^-[RQ]\s+\.\s+([\w.]+)", project.read_text("utf-8"), re.M)
        if m:
            return base, m.group(1)
    return base, ""


def _words(sentence: str) -> tuple[list[str], int]:
    """The command's leading words with attributes and prefixes skipped: (words, offset of
    the keyword in the sentence)."""
    i = _BULLETS.match(sentence).end()  # type: ignore[union-attr]
    while True:
        while i < len(sentence) and sentence[i].isspace():
            i += 1
        if _ATTRIBUTE.match(sentence, i):
            i = balanced(sentence, i + 1, "[", "]")
            continue
        m = re.compile(r"\S+").match(sentence, i)
        if m and m.group(0) in _PREFIXES:
            i = m.end()
            continue
        break
    return sentence[i:].split(None, 3), i


def _assumed(rest: str) -> list[tuple[str, str]]:
    """(name, type) of each name an `Axiom`/`Parameter` command declares: `a b : T`, or
    `(a b : T) (c : U)`."""
    rest = re.sub(r"^\s*Inline(\(\d+\))?", "", rest).strip()  # `Parameter Inline(30) t : T`
    if rest.startswith("("):
        out = []
        for group in re.findall(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)", rest):
            names, _, typ = group.partition(":")
            out += [(n, typ) for n in names.split() if _IDENT.fullmatch(n)]
        return out
    head, _, typ = rest.partition(":")
    return [(n, typ) for n in head.split() if _IDENT.fullmatch(n)]


def parse_file(root: Path, path: Path, text: str) -> list[Decl]:
    """The declarations of one `.v` file (see the module docstring)."""
    base, prefix = _library_prefix(root)
    rel = path.relative_to(base) if path.is_relative_to(base) else path.relative_to(root)
    module = ".".join([*([prefix] if prefix else []), *rel.with_suffix("").parts])
    view = mask_ml(path, text, doubled_quote_strings=True)
    stack: list[tuple[str, str]] = []  # (kind, name): module, module type or section
    decls: list[Decl] = []
    start = 0
    for end in _END.finditer(view.structure):
        sentence = view.structure[start : end.start()]
        at = start
        start = end.end()
        words, kw_at = _words(sentence)
        if not words:
            continue
        kw = words[0]
        if kw == "Module":
            _open_module(words, sentence, stack)
            continue
        if kw == "Section" and len(words) > 1:
            stack.append(("section", words[1]))
            continue
        if kw == "End" and len(words) > 1:
            _close(words[1], stack)
            continue
        if kw not in THEOREMS and kw not in DEFINITIONS and kw not in ASSUMPTIONS:
            continue
        body_at = at + kw_at + len(kw)
        rest = view.structure[body_at : at + len(sentence)]
        path_names = [name for k, name in stack if k != "section"]
        in_type = any(k == "module type" for k, _ in stack)
        line = view.line(at + kw_at)
        if kw in ASSUMPTIONS:
            code = view.code[body_at : at + len(sentence)]
            assumed = _assumed(code)
            names = [n for n, _ in assumed]
            types = {n: clean_statement(t) for n, t in assumed}
        else:
            m = _IDENT.match(rest.lstrip())
            if m is None:  # an anonymous Instance
                continue
            names = [m.group(0)]
            offset = len(rest) - len(rest.lstrip()) + m.end()
            stmt_end = len(rest)
            if kw not in THEOREMS and (assign := _ASSIGN.search(rest, offset)):
                stmt_end = assign.start()
            types = {names[0]: clean_statement(view.code[body_at + offset : body_at + stmt_end])}
        for name in names:
            decls.append(
                Decl(
                    name=".".join([module, *path_names, name]),
                    kind=kw.lower().rstrip("s") if kw in ("Axioms", "Parameters") else kw.lower(),
                    module=module,
                    line=line,
                    statement=types.get(name),
                    extra={"file": str(path.relative_to(root)), "module_type": in_type}
                    if in_type
                    else {"file": str(path.relative_to(root))},
                )
            )
    return decls


def _open_module(words: list[str], sentence: str, stack: list[tuple[str, str]]) -> None:
    """`Module X.`, `Module Import X (P : T) <: S.`, `Module Type X.` open a module;
    `Module X := Y.` (one sentence) does not."""
    rest = words[1:]
    kind = "module"
    if rest and rest[0] == "Type":
        kind, rest = "module type", rest[1:]
    if rest and rest[0] in ("Import", "Export"):
        rest = rest[1:]
    if not rest:
        return
    name = _IDENT.match(rest[0])
    if name is None or _ASSIGN.search(_WITH.sub(" ", sentence)):
        return
    stack.append((kind, name.group(0)))


def _close(name: str, stack: list[tuple[str, str]]) -> None:
    """`End X.` closes X (and anything left open inside it)."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][1] == name:
            del stack[i:]
            return


def _files(root: Path) -> list[Path]:
    base, _ = _library_prefix(root)
    return sorted(p for p in base.rglob("*.v") if p.is_file())


READER = SystemReader(SOURCE, "Rocq .v files", _files, parse_file)


def import_rocq(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The standard library's checkout at its pin."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "rocq_stdlib_dir", "Rocq stdlib checkout", import_rocq))
