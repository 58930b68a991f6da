"""A lexical scanner for Lean 4 sources, with no toolchain: how math2 reads a repository that
publishes no lean_scout data.

Per file: the lexer's code view (`math2.lean.syntax.mask`: comments, strings and character
literals blanked, so nothing inside them is mistaken for code; doc comments kept aside), then
one regular expression finds the structural commands (`namespace`, `section`, `end`, `open`)
and the declarations with their attributes and modifiers. Names are resolved against the
namespace stack (`_root_` escapes it); the statement is the text up to the top-level `:=`, `|`
or `where`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from pathlib import Path

from math2.errors import InputError
from math2.importers.lean_bodies import (
    constructor_clauses,
    field_clause,
    value_clauses,
)
from math2.importers.lean_decl import WS, Declaration, SourceFile, statement_end
from math2.importers.lean_fields import structure_fields
from math2.importers.lean_namegen import instance_base_name
from math2.importers.lean_names import lean_name
from math2.importers.lean_notation import START as NOTATION_START
from math2.importers.lean_notation import read_notation
from math2.importers.to_additive import (
    ToAdditive,
    attribute_additive,
    parse_attribute,
    split_attributes,
)
from math2.lean.lexer import LexError
from math2.lean.syntax import mask
from math2.util.yamlfile import decode_utf8

__all__ = [
    "KEYWORDS",
    "READER",
    "Declaration",
    "SourceFile",
    "blank",
    "lean_files",
    "module_name",
    "scan_file",
]

# The version of what the scanner records: an import of a checkout read by another version is
# done again (math2.importers.common.read_by). 2: what a definition says (`body`); 3: a private
# structure's fields are private, and a public name wins over a private one of the same name;
# 4: binder fields with binders of their own, a modifier before a binder field, and no field
# for a parent's default (`name := v` in a structure that extends another; branch fields46);
# an additive twin's name translated between primes too (`map_one'` → `map_zero'`).
READER = "lean_source 4"

KEYWORDS = (
    "theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive",
    "opaque", "axiom", "alias", "irreducible_def", "example", "coinductive",
)  # fmt: skip
_MODIFIERS = (
    r"(?:(?:private|protected|public|meta|noncomputable|unsafe|partial|nonrec|scoped|local)\s+)*"
)
# A declaration (with optional attributes) or a structural command, at the start of a line.
_EVENT = re.compile(
    r"^[ \t]*(?:"
    r"(?P<attrs>(?:@\[(?:[^\[\]]|\[[^\[\]]*\])*\]\s*)+)?"
    r"(?P<mods>" + _MODIFIERS + r")"
    r"(?P<kw>class\s+inductive|" + "|".join(KEYWORDS) + r")\b"
    r"|(?:@\[[^\]\n]*\]\s*)?(?P<cmd>namespace|end|open|mutual|attribute"
    r"|(?:(?:public|meta|noncomputable)\s+)*section)\b(?P<arg>[^\n]*)"
    r")",
    re.M,
)
# A name: parts separated by dots, each plain or «quoted»; universe parameters `.{u, v}` after.
_NAME = re.compile(r"\s*((?:«[^»]*»|[^\s:({\[⦃⟨|@,;.«]+)(?:\.(?:«[^»]*»|[^\s:({\[⦃⟨|@,;.«]+))*)")
_UNIVERSES = re.compile(r"\.\{[^}]*\}")
_PRIORITY = re.compile(r"\s*\((?:priority|kind)\s*:=[^)]*\)")
_DEPRECATED = re.compile(
    r"deprecated\s*(?P<succ>[^\s(\]\"]+)?\s*(?:\(\s*since\s*:=\s*(?P<since>[^)]*)\))?"
)
_STACKS = re.compile(r"stacks\s+([0-9A-Z]{4})")
_MAIN_SECTION = re.compile(
    r"^#+\s*Main (results|statements|theorems|definitions)\b.*$", re.I | re.M
)
_BACKTICK = re.compile(r"`([^`\s]+)`")


def blank(text: str, path: str | Path) -> tuple[str, list[tuple[int, int, str]]]:
    """The lexer's code view of a file (`math2.lean.syntax.mask`): comments, strings and
    character literals replaced by spaces (newlines kept), and the doc comments as (start, end,
    text). Unterminated comments, strings and «names» are InputErrors naming the file and line."""
    try:
        view = mask(text)
    except LexError as exc:
        raise InputError(path, exc.line, exc.reason, exc.column) from None
    return view.code, view.docs


def module_name(root: Path, path: Path) -> str:
    """`Mathlib/Algebra/Group/Basic.lean` -> `Mathlib.Algebra.Group.Basic`."""
    return ".".join(path.relative_to(root).with_suffix("").parts)


def _main_results(docs: list[tuple[int, int, str]]) -> list[str]:
    names: list[str] = []
    for _, _, body in docs:
        if not body.startswith("/-!"):
            continue
        for m in _MAIN_SECTION.finditer(body):
            rest = body[m.end() :]
            nxt = re.search(r"^#+\s", rest, re.M)
            names += _BACKTICK.findall(rest[: nxt.start()] if nxt else rest)
    return [n for n in names if len(n) > 2 and ("." in n or n.isidentifier())]


_ATTR = re.compile(r"@\[((?:[^\[\]]|\[[^\[\]]*\])*)\]")
_ALIAS_PAIR = re.compile(r"\s*⟨([^⟩]*)⟩\s*:=\s*(\S+)")
_ALIAS_TARGET = re.compile(r"\s*:=\s*(\S+)")


def _doc_before(code: str, at: int, doc_ends: dict[int, str], positions: list[int]) -> str | None:
    """The doc comment that ends right before `at` (only blanks between), without its marks."""
    p = bisect.bisect_right(positions, at)
    if p and not code[positions[p - 1] : at].strip():
        return doc_ends[positions[p - 1]][3:-2].strip()
    return None


def scan_file(root: Path, path: Path) -> SourceFile:
    """Scan one `.lean` file."""
    raw = path.read_bytes()
    text = decode_utf8(raw, path)
    code, docs = blank(text, path)
    module = module_name(root, path)
    decls: list[Declaration] = []
    ns: list[tuple[str, int]] = []  # (kind: "namespace"/"section", number of name parts)
    parts: list[str] = []
    doc_ends = {end: body for _, end, body in docs if body.startswith("/--")}
    doc_positions = sorted(doc_ends)
    doc_starts = sorted(st for st, _, _ in docs)
    taken: dict[str, int] = {}  # generated instance names in this file
    additive_attrs: list[tuple[list[str], ToAdditive]] = []
    ns_at: list[tuple[int, str]] = [(0, "")]  # (offset, the namespace from there on)
    opens: list[str] = []  # the namespaces some `open` of the file names
    counted, line = 0, 1  # the line at offset `counted` (events come in order: no recount)

    for m in _EVENT.finditer(code):
        cmd = m.group("cmd")
        if cmd is not None:
            arg = m.group("arg").strip()
            # One scope per name part, as Lean opens them: `namespace A.B` then `end B` leaves
            # A open.
            if cmd == "namespace":
                new = arg.split()[0].split(".") if arg else []
                ns += [("namespace", 1)] * len(new)
                parts += new
            elif cmd == "attribute":
                attribute_additive(text, m, parts, additive_attrs)
            elif cmd == "open":
                opens += [w for w in arg.split() if w[:1].isupper() and "(" not in w]
            elif cmd == "mutual":
                ns.append(("mutual", 0))
            elif cmd.endswith("section"):
                ns += [("section", 0)] * (len(arg.split()[0].split(".")) if arg else 1)
            elif cmd == "end":
                for _ in range(len(arg.split()[0].split(".")) if arg else 1):
                    if ns and ns.pop()[1]:
                        parts.pop()
            if cmd in ("namespace", "end"):
                ns_at.append((m.start(), ".".join(parts)))
            continue
        kw = WS.sub(" ", m.group("kw"))
        start = m.end()
        line += code.count("\n", counted, m.start())
        counted = m.start()
        # Attributes found in the blanked code (brackets inside strings and doc comments do not
        # count), their text taken from the original: strings (`since := "…"`) matter.
        attrs = (
            [
                WS.sub(" ", text[am.start(1) : am.end(1)]).strip()
                for am in _ATTR.finditer(code, m.start("attrs"), m.end("attrs"))
            ]
            if m.group("attrs")
            else []
        )
        mods = m.group("mods").split()
        if kw == "instance" and (pm := _PRIORITY.match(code, start)):
            start = pm.end()
        name = None
        nm = _NAME.match(code, start)
        if kw not in ("example",) and nm and not nm.group(1).startswith(("(", "{", "[", ":")):
            local = nm.group(1)
            if local in ("where", ":=", "extends"):
                local = None
            if local:
                local = lean_name(local)
                name = (
                    local.removeprefix("_root_.")
                    if local.startswith("_root_.")
                    else (".".join([*parts, local]) if parts else local)
                )
                start = nm.end()
                if um := _UNIVERSES.match(code, start):
                    start = um.end()
        end = statement_end(code, start)
        # a doc comment (blank in `code`) ends a statement that has no `:=` or `where`
        nd = bisect.bisect_left(doc_starts, start)
        if nd < len(doc_starts) and doc_starts[nd] < end:
            end = doc_starts[nd]
        statement = WS.sub(" ", text[start:end]).strip() if kw != "alias" else ""
        indent = len(m.group(0)) - len(m.group(0).lstrip())
        d = Declaration(
            name=name,
            kind=kw,
            module=module,
            line=line,
            statement=statement,
            docstring=_doc_before(code, m.start() + indent, doc_ends, doc_positions),
            attributes=attrs,
            modifiers=mods,
        )
        for a in attrs:
            if a.lstrip().startswith("deprecated") and (dm := _DEPRECATED.search(a)):
                d.successor = dm.group("succ")
                d.deprecated_since = (dm.group("since") or "").strip().strip('"') or "unknown"
            d.stacks += _STACKS.findall(a)
            for part in split_attributes(a) if "to_additive" in a else ():
                d.additive = d.additive or parse_attribute(part)
        if kw == "alias" and (target := _ALIAS_TARGET.match(code, start)):
            d.successor = d.successor or target.group(1)
        if kw == "alias" and name is None and (pair := _ALIAS_PAIR.match(code, start)):
            # `alias ⟨mp, mpr⟩ := foo_iff`: one alias per named direction
            for at, local in enumerate(x.strip() for x in pair.group(1).split(",")):
                if local and local != "_":
                    full = ".".join([*parts, local]) if parts else local
                    decls.append(
                        Declaration(
                            name=full,
                            kind="alias",
                            module=module,
                            line=line,
                            statement="",
                            docstring=d.docstring,
                            attributes=attrs,
                            modifiers=mods,
                            deprecated_since=d.deprecated_since,
                            successor=d.successor or pair.group(2),
                            alias_direction=("mp", "mpr")[at] if at < 2 else None,
                        )
                    )
            continue
        if name is None and kw == "instance":
            base = instance_base_name(statement, parts)
            taken[base] = taken.get(base, 0) + 1
            if taken[base] > 1:  # Lean appends _1, _2, … when the name is taken
                base = f"{base}_{taken[base] - 1}"
            d.name = ".".join([*parts, base])
            d.generated = True
        decls.append(d)
        if kw in ("def", "abbrev", "irreducible_def"):
            d.body = value_clauses(code, end, doc_starts)
        elif kw in ("inductive", "class inductive", "coinductive"):
            d.body = constructor_clauses(code, end, doc_starts)
        if kw in ("structure", "class") and name and code.startswith("where", end):
            fields = structure_fields(code, text, end + 5, d)
            d.body = [field_clause((f.name or "").rsplit(".", 1)[-1], f.statement) for f in fields]
            decls += fields
    offsets = [at for at, _ in ns_at]
    notations = []
    for nm in NOTATION_START.finditer(code):
        namespace = ns_at[bisect.bisect_right(offsets, nm.start()) - 1][1]
        notations += read_notation(code, text, nm, namespace)
    return SourceFile(
        module=module,
        path=str(path),
        declarations=decls,
        main_results=_main_results(docs),
        additive_attributes=additive_attrs,
        notations=notations,
        opens=list(dict.fromkeys(opens)),
    )


def lean_files(root: Path) -> Iterator[Path]:
    """Every `.lean` file under root, in a stable order (build outputs skipped)."""
    for p in sorted(root.rglob("*.lean")):
        if ".lake" not in p.parts and "lake-packages" not in p.parts:
            yield p
