"""Rocq's standard library: a mention per `Theorem`, `Lemma`, `Definition`, `Fixpoint`,
`Inductive`, `Record`, `Class`, `Instance`, `Axiom`, `Parameter`, … of the `.v` files under
`theories/`, named by its logical path (`Stdlib.Arith.PeanoNat.Nat.add_comm`: the library's
prefix from `theories/dune` or `_CoqProject`, the file's folders and name, then the enclosing
`Module`s; a `Section` adds nothing to a name). LGPL-2.1: mentions and crosswalks only, no
comment is read as text (K6.6). Section-local `Let`, `Variable`, `Hypothesis`, `Context` are
not declarations of the library and are not read.

Every command that names or declares something and is not read is counted by form
(`systems.Unread`, `unread_form`): section-local variables, `Abbreviation` and `Notation NAME :=`
(another name for a term), other notations, `Ltac` and `Tactic Notation`, `Scheme`, `Add
Morphism`/`Relation`/`Ring`/`Field`/`Setoid` (instances with names of their own), `Declare
Instance`/`Module` (in a module type), `Coercion`/`Canonical` with a body, an `Instance`
without a name. Constructors and record fields are part of their inductive's mention.

Statements: a theorem's binders and type; a definition's binders and type, and its body as
well (`… : Prop := body`) when it is Prop-valued or states no type (its meaning is its body) —
except an untyped `fun …` term, a proof or program whose type Rocq infers.

Names users write (`importers.rocq_modules`): a module that `Include`s another — a functor such
as `NBasicProp`, a functor type, or a plain module (`Include BinIntDef.Z`), also through
`Module Type X := A <+ B` — gets every declaration of what it includes under its own name
(`Stdlib.Arith.PeanoNat.Nat.add_comm` from `…NZAdd.NZAddProp.add_comm`), marked
`included_from` (the name it was declared under). Declarations inside a `Module Type` or a
functor (a module with parameters) are kept, marked `functor_body: true` (and `module_type`
inside a module type): they are not constants a user can name, and the search index leaves out
each one a module includes under its own name (`math2.retrieval.corpus`)."""

from __future__ import annotations

import re
from pathlib import Path

from math2.importers.masking import balanced, mask_ml
from math2.importers.registry import ImportResult, register
from math2.importers.rocq_modules import FileRead, Include, Library, ModuleInfo
from math2.importers.systems import (
    Decl,
    Parsed,
    SystemReader,
    Unread,
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


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """The declarations of one `.v` file as it states them, and the forms it does not read
    (see the module docstring; what modules get by `Include` is added by
    `rocq_modules.Library` over the whole library)."""
    got = read_file(root, path, text)
    return Parsed(got.decls, got.unread)


def read_file(root: Path, path: Path, text: str) -> FileRead:
    """One `.v` file: its declarations, its modules and what each includes."""
    base, prefix = _library_prefix(root)
    rel = path.relative_to(base) if path.is_relative_to(base) else path.relative_to(root)
    module = ".".join([*([prefix] if prefix else []), *rel.with_suffix("").parts])
    file = str(path.relative_to(root))
    view = mask_ml(path, text, doubled_quote_strings=True)
    out = FileRead(file=file)
    out.modules.append(ModuleInfo(module, "file", False, False, file, 1))
    stack: list[tuple[str, str]] = []  # (kind, name): module, module type, functor or section
    start = 0
    for end in _END.finditer(view.structure):
        sentence = view.structure[start : end.start()]
        at = start
        start = end.end()
        words, kw_at = _words(sentence)
        if not words:
            continue
        kw = words[0]
        path_names = [name for k, name in stack if k != "section"]
        here = ".".join([module, *path_names])
        abstract = any(k in ("module type", "functor") for k, _ in stack)
        line = view.line(at + kw_at)
        if kw == "Module":
            _open_module(words, sentence, stack, out, here, abstract, file, line)
            continue
        if kw == "Include" and len(words) > 1:
            out.includes += [Include(here, ref, file, line) for ref in _included(sentence)]
            continue
        if kw == "Section" and len(words) > 1:
            stack.append(("section", words[1]))
            continue
        if kw == "End" and len(words) > 1:
            _close(words[1], stack)
            continue
        if kw not in THEOREMS and kw not in DEFINITIONS and kw not in ASSUMPTIONS:
            if (form := unread_form(words, sentence[kw_at:])) is not None:
                out.unread.append(Unread(form, line))
            continue
        body_at = at + kw_at + len(kw)
        rest = view.structure[body_at : at + len(sentence)]
        in_type = any(k == "module type" for k, _ in stack)
        if kw in ASSUMPTIONS:
            code = view.code[body_at : at + len(sentence)]
            assumed = _assumed(code)
            names = [n for n, _ in assumed]
            types = {n: clean_statement(t) for n, t in assumed}
        else:
            m = _IDENT.match(rest.lstrip())
            if m is None:  # `Instance : C T := …`: Rocq makes up its name
                out.unread.append(Unread(ANONYMOUS_INSTANCE, line))
                continue
            names = [m.group(0)]
            offset = len(rest) - len(rest.lstrip()) + m.end()
            types = {names[0]: _statement(kw, view.code, rest, body_at, offset)}
        extra: dict[str, object] = {"file": file}
        if in_type:
            extra["module_type"] = True
        if abstract:
            extra["functor_body"] = True
        for name in names:
            out.decls.append(
                Decl(
                    name=f"{here}.{name}",
                    kind=kw.lower().rstrip("s") if kw in ("Axioms", "Parameters") else kw.lower(),
                    module=module,
                    line=line,
                    statement=types.get(name),
                    extra=dict(extra),
                )
            )
    return out


# Forms that name or declare something the import does not read, by their command.
ANONYMOUS_INSTANCE = "Instance without a name (Rocq makes one up)"
_UNREAD = {
    "Abbreviation": "Abbreviation (another name for a term)",
    "Ltac": "Ltac, Tactic Notation (a tactic, not a statement)",
    "Ltac2": "Ltac, Tactic Notation (a tactic, not a statement)",
    "Tactic": "Ltac, Tactic Notation (a tactic, not a statement)",
    "Notation": "Notation, Infix (syntax, not a statement)",
    "Infix": "Notation, Infix (syntax, not a statement)",
    "Scheme": "Scheme (the induction principles it defines)",
    "Declare": "Declare Instance, Declare Module (a parameter of a module type)",
}
_SECTION_LOCAL = frozenset({"Variable", "Variables", "Hypothesis", "Hypotheses", "Context", "Let"})
_ADDED = frozenset({"Morphism", "Parametric", "Relation", "Ring", "Field", "Setoid"})
_DEFINING_ALIAS = re.compile(r"^\s*[^\W\d][\w'.]*\s*:=")


def unread_form(words: list[str], sentence: str) -> str | None:
    """The form a command that the import does not read takes, when it declares or names
    something (a section's variables, an abbreviation, a tactic, a morphism's instance, …);
    None for a command that declares nothing (a proof step, `Hint`, `Arguments`, `Require`)."""
    kw = words[0]
    if kw in _SECTION_LOCAL:
        return "Variable, Hypothesis, Context, Let (section-local, not in the library)"
    if kw == "Notation" and len(words) > 1 and _DEFINING_ALIAS.match(sentence[len(kw) :]):
        return _UNREAD["Abbreviation"]  # `Notation plus_comm := Nat.add_comm`: a name
    if kw == "Tactic" and words[1:2] != ["Notation"]:
        return None
    if kw == "Declare" and words[1:2] not in (["Instance"], ["Module"]):
        return None
    if kw in _UNREAD:
        return _UNREAD[kw]
    if kw == "Add" and len(words) > 1 and words[1] in _ADDED:
        return "Add Morphism, Relation, Ring, Field, Setoid (the instances it declares)"
    if kw in ("Coercion", "Canonical") and ":=" in sentence:
        return "Coercion, Canonical with a body (the constant it defines)"
    return None


def _statement(kw: str, code: str, rest: str, body_at: int, offset: int) -> str | None:
    """A theorem's binders and type; a definition's binders and type, with ` := body` when it
    is Prop-valued or states no type (its meaning is then its body)."""
    if kw in THEOREMS or (assign := _ASSIGN.search(rest, offset)) is None:
        return clean_statement(code[body_at + offset : body_at + len(rest)])
    head = code[body_at + offset : body_at + assign.start()]
    typ = _type_of(rest[offset : assign.start()])
    if typ is not None and not _PROP.search(typ):
        return clean_statement(head)
    body = code[body_at + assign.start() : body_at + len(rest)]
    if typ is None and _FUN.match(body, 2):
        # `Definition foo := fun n m => eq_trans …`: a proof or program whose type Rocq
        # infers; its words are not what it states
        return clean_statement(head)
    return clean_statement(f"{head} {body}")


_FUN = re.compile(r"\s*\(?\s*fun\b")


_PROP = re.compile(r"(?:^|->|\s)Prop\s*$")


def _type_of(head: str) -> str | None:
    """The type after the binders (`(n : nat) : nat` gives `nat`): the text after the first
    `:` outside brackets; None when no type is written."""
    depth = 0
    for i, c in enumerate(head):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ":" and depth == 0 and head[i + 1 : i + 2] not in ("=", ">"):
            return head[i + 1 :].strip()
    return None


def _included(sentence: str) -> list[str]:
    """The modules an `Include A N <+ B N <+ C.` sentence names (`A`, `B`, `C`)."""
    body = re.sub(r"^\s*Include\s+(Type\s+)?", "", sentence.strip())
    return [m.group(0) for part in body.split("<+") if (m := _QUALID.match(part.strip()))]


_QUALID = re.compile(r"[^\W\d][\w']*(?:\.[^\W\d][\w']*)*")


def _open_module(
    words: list[str],
    sentence: str,
    stack: list[tuple[str, str]],
    out: FileRead,
    here: str,
    abstract: bool,
    file: str,
    line: int,
) -> None:
    """`Module X.`, `Module Import X (P : T) <: S.`, `Module Type X.` open a module (a functor
    when it has parameters); `Module X := A <+ B.` and `Module Type X (P : T) := A P <+ B P.`
    (one sentence) declare one made of what they name."""
    rest = words[1:]
    kind = "module"
    if rest and rest[0] == "Type":
        kind, rest = "module type", rest[1:]
    if rest and rest[0] in ("Import", "Export"):
        rest = rest[1:]
    if not rest:
        return
    name = _IDENT.match(rest[0])
    if name is None:
        return
    after = sentence[sentence.index(rest[0]) + name.end() :]
    functor = after.lstrip().startswith("(")
    full = f"{here}.{name.group(0)}"
    unconstrained = _WITH.sub(" ", sentence)
    out.modules.append(
        ModuleInfo(full, kind, functor, abstract or functor or kind == "module type", file, line)
    )
    if assign := _ASSIGN.search(unconstrained):
        body = unconstrained[assign.end() :]
        refs = _included(f"Include {body}")
        # `Module X := Y.`: another name for Y (a functor's alias is a functor), not a copy
        alias = len(refs) == 1 and bool(_QUALID.fullmatch(body.strip()))
        out.includes += [Include(full, ref, file, line, alias=alias) for ref in refs]
        return
    stack.append(("functor" if functor and kind == "module" else kind, name.group(0)))


def _close(name: str, stack: list[tuple[str, str]]) -> None:
    """`End X.` closes X (and anything left open inside it)."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][1] == name:
            del stack[i:]
            return


def _files(root: Path) -> list[Path]:
    base, _ = _library_prefix(root)
    return sorted(p for p in base.rglob("*.v") if p.is_file())


# Which files the library has, and one file's own declarations (no `Include` resolved: that
# needs the whole library, which `import_rocq` reads through `rocq_modules.Library`).
READER = SystemReader(SOURCE, "Rocq .v files", _files, parse_file)


def import_rocq(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The standard library's checkout at its pin, each module with what it includes."""
    library = Library(read_file, _files)
    return import_checkout(store, entry, path, library.reader(SOURCE, "Rocq .v files"))


register(git_checkout(SOURCE, "rocq_stdlib_dir", "Rocq stdlib checkout", import_rocq))
