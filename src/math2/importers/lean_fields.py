"""A `structure`'s or `class`'s fields as declarations of their own (`Point.x`), read by the
Lean source scanner (`lean_source.py`) from the body after `where`."""

from __future__ import annotations

import re

from math2.importers.lean_decl import WS, Declaration, statement_end
from math2.importers.lean_names import lean_name
from math2.lean.brackets import matching
from math2.lean.lexer import tokenize

_MODS = r"(?P<mods>(?:@\[[^\]\n]*\]\s*)?(?:(?:private|protected)\s+)*)"
_NAME = r"(?!(?:private|protected)\b)(?:«[^»]*»|[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ]*)"
_NAMES = rf"(?P<names>{_NAME}(?:\s+{_NAME})*)"
_FIELD = re.compile(_MODS + rf"{_NAMES}\s*(?=[:({{\[⦃]|:=)")
# `(a b : T)`, `[inst : T]`, `{x : T}`, and with binders of its own: `(hf_top (r : ℝ) : T)`,
# `[compactSpace_spectrum (a : A) : CompactSpace (spectrum R a)]`; after any modifiers
# (`protected [nonempty : Nonempty V]`)
_BINDER_FIELD = re.compile(_MODS + rf"[(\[{{⦃]\s*{_NAMES}\s*(?=[:(\[{{⦃])")
# `name := v`, `compare a b := v`: no type; in a structure that `extends` another, read as a
# parent's field given a default (Lean declares nothing: `LinearOrder`'s `min`, `compare`).
# Lean declares a new field where no parent has `name`; the scanner reads one file and does not
# know the parents' fields, so such a field is lost: 4 at the manifest's pin
# (`RingNF.Config.ifUnchanged`, `RingNF.Config.mode`, `AbelNF.Config.mode`,
# `GRewrite.Config.useKAbstract`; review of fields46, M1) against 44 defaults that were wrongly
# read as fields before (`LinearOrder.a`, `Monoid.npow`, `Preorder.lt`).
_UNTYPED = re.compile(r"\s*:=")
_EXTENDS = re.compile(r"\bextends\b")
_CONSTRUCTOR = re.compile(r"(?:[^\W\d][\w'!?]*\s*)?::(?=\s|$)\s*")


def structure_fields(code: str, text: str, start: int, owner: Declaration) -> list[Declaration]:
    """The fields of a structure or class whose `where` ends at `start`: each is its own
    declaration (`Point.x`), with the text after its name as the statement; a private
    structure's fields are private (Lean's projections of it are). A body ends at
    the first line that starts at column 0; field lines are those at the body's indentation."""
    end = len(code)
    body_end = re.compile(r"\n(?=\S)").search(code, start)
    if body_end:
        end = body_end.start()
    lines, pos, indent = [], start, None
    for raw in code[start:end].split("\n"):
        stripped = raw.lstrip()
        here = len(raw) - len(stripped)
        if ctor := _CONSTRUCTOR.match(stripped):  # `mk ::` / `ofRepr ::` names the constructor;
            stripped = stripped[ctor.end() :]  # its fields follow, often indented under it
            here += ctor.end()
            if stripped:
                lines.append((pos + here, stripped))
        elif stripped and indent is None:
            indent = here
        if stripped and here == indent:
            lines.append((pos + here, stripped))
        pos += len(raw) + 1
    out: list[Declaration] = []
    doc_line = code.count("\n", 0, start) + 1
    for k, (at, stripped) in enumerate(lines):
        if stripped.startswith("deriving"):
            continue
        fm = _FIELD.match(stripped)
        bm = None if fm else _BINDER_FIELD.match(stripped)
        if fm:
            names = fm.group("names").split()
            rest_at = at + fm.end()
            if _UNTYPED.match(stripped, fm.end()):  # `name := v`, `name a b := v`
                if _EXTENDS.search(owner.statement):
                    continue  # a parent's field given a default: no declaration
                names = names[:1]  # a new field (its type inferred); the rest are binders
        elif bm:  # `(x y : T)`, `[inst : T]`, `{x : T}`, `(h (r : ℝ) : T)`
            names = bm.group("names").split()
            rest_at = at + bm.end()  # from its colon or binders, as `name : T` reads
        else:
            continue
        nxt = lines[k + 1][0] if k + 1 < len(lines) else end
        stop = min(statement_end(code, rest_at), nxt)
        if bm:  # the binder's own closing bracket ends it
            opened = at + bm.end("mods")
            toks = tokenize(code[opened:stop])
            close = matching(toks, 0) if toks else None
            stop = opened + toks[close].offset if close is not None else stop
        stop = rest_at + len(code[rest_at:stop].rstrip())  # not the next field's doc comment
        statement = WS.sub(" ", text[rest_at:stop]).strip()
        found = fm or bm
        assert found is not None
        modifiers = [w for w in found.group("mods").split() if w[0] != "@"]
        if owner.private and "private" not in modifiers:
            # Lean names a field `structDeclName ++ name`: under a private structure's mangled
            # name, so private too (and `private`/`protected` on it is an error there)
            modifiers.insert(0, "private")
        for local in names:
            out.append(
                Declaration(
                    name=f"{owner.name}.{lean_name(local)}",
                    kind="field",
                    module=owner.module,
                    line=doc_line + code.count("\n", start, at),
                    statement=statement,
                    docstring=field_doc(text, at),
                    attributes=[],
                    modifiers=modifiers,
                )
            )
    return out


def field_doc(text: str, at: int) -> str | None:
    """The doc comment right above a field, if any."""
    before = text[:at].rstrip()
    if before.endswith("-/"):
        open_at = before.rfind("/--")
        if open_at >= 0 and "-/" not in before[open_at:-2]:
            return before[open_at + 3 : -2].strip()
    return None
