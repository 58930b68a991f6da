"""Lean's names as the compiler writes them, derived from source text with no toolchain (the
name Lean generates for an anonymous instance is `lean_namegen`'s).

- `lean_name`: `«…»` quotes are dropped around a name part that needs none (`«Foo».bar` is
  `Foo.bar`); they stay where the part is not an identifier (`«term_+_»`), which is how Lean
  prints such names.
- `binder_groups`, `top_level_colon`: a declaration's binders and where its type begins.
- `class_signatures`: which classes are Prop-valued and which take instance arguments, read
  from a Lean file (what `lean_namegen` needs to know of a library's classes).
- `module_suffix`: the suffix Lean appends to a generated name (`_mathlib_algebra_demo`).
"""

from __future__ import annotations

import re

from math2.lean.syntax import NAME_PART

# Tokens Lean would escape with «» even though they look like identifiers.
_KEYWORDS = frozenset(
    [
        "at",
        "by",
        "do",
        "else",
        "end",
        "fun",
        "have",
        "if",
        "in",
        "let",
        "match",
        "open",
        "show",
        "then",
        "where",
        "with",
        "from",
        "deriving",
        "theorem",
        "lemma",
        "def",
        "instance",
        "structure",
        "class",
        "namespace",
        "section",
        "variable",
        "universe",
        "import",
        "example",
        "abbrev",
        "inductive",
        "Type",
        "Prop",
        "Sort",
    ]
)
_QUOTED = re.compile(r"«([^»]*)»")
_BINDER_GROUP = re.compile(r"([({\[⦃])((?:[^(){}\[\]⦃⦄]|\([^()]*\)|\[[^\[\]]*\])*)([)}\]⦄])")


def lean_name(name: str) -> str:
    """A name with the «» quotes Lean would not print removed."""

    def unquote(m: re.Match[str]) -> str:
        inner = m.group(1)
        ok = NAME_PART.fullmatch(inner) and inner not in _KEYWORDS
        return inner if ok else m.group(0)

    return _QUOTED.sub(unquote, name) if "«" in name else name


def top_level_colon(statement: str) -> int:
    """Where a statement's type begins: its first `:` outside brackets (not `:=`), or -1."""
    depth = 0
    for i, ch in enumerate(statement):
        if ch in "([{⟨⦃":
            depth += 1
        elif ch in ")]}⟩⦄":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and statement[i : i + 2] != ":=":
            return i
    return -1


def binder_groups(binders: str) -> list[tuple[str, list[str], str]]:
    """`{α : Type*} [inst : Foo α] (x y : α)` → (bracket, names, type) per group."""
    out = []
    for m in _BINDER_GROUP.finditer(binders):
        body = m.group(2).strip()
        colon = top_level_colon(body)
        if colon >= 0:
            names, ty = body[:colon].split(), body[colon + 1 :].strip()
        elif m.group(1) == "[":
            names, ty = [], body
        else:
            names, ty = body.split(), ""
        out.append((m.group(1), names, ty))
    return out


_CLASS = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
    r"(class|structure)\s+(?:inductive\s+)?(\S+)(.*?)(?=\bwhere\b|:=|\n\s*\n|\Z)",
    re.M | re.S,
)


def class_signatures(text: str) -> dict[str, tuple[bool, bool]]:
    """Class and structure name (last part) → (Prop-valued, takes instance arguments), from a
    Lean file's text (`class Module (R M) [Semiring R] [AddCommMonoid M] extends …`)."""
    out = {}
    for m in _CLASS.finditer(text):
        header = m.group(3).split(" extends ", 1)[0]
        name = lean_name(m.group(2)).rsplit(".", 1)[-1]
        colon = top_level_colon(header)
        prop = colon >= 0 and header[colon + 1 :].strip().startswith("Prop")
        out[name] = (prop, "[" in header[: colon if colon >= 0 else len(header)])
    return out


def module_suffix(module: str) -> str:
    """`Mathlib.Algebra.Demo` → `_mathlib_algebra_demo` (Lean's `moduleToSuffix`)."""
    return "".join("_" + p[:1].lower() + p[1:] for p in module.split("."))
