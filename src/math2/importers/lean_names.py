"""Lean's names as the compiler writes them, derived from source text with no toolchain.

- `lean_name`: `«…»` quotes are dropped around a name part that needs none (`«Foo».bar` is
  `Foo.bar`); they stay where the part is not an identifier (`«term_+_»`), which is how Lean
  prints such names.
- `instance_base_name`: the name Lean generates for an anonymous instance (`instance : CommRing
  (AlgebraicClosure k)` is `instCommRingAlgebraicClosure`). Lean builds it from the elaborated
  type: `inst` followed by the last part of each constant it meets, capitalised, each constant
  once, leaving out implicit and instance arguments and the constants the current namespace
  already names. From source text this is approximate: a constant is an identifier that starts
  with a capital letter (or a dotted one whose last part does), that the instance's own binders
  do not bind and that is not a single capital letter with optional subscripts or primes (those
  are nearly always variables); notation is mapped for the common number systems (ℕ, ℤ, ℚ, ℝ,
  ℂ, ℝ≥0, ℝ≥0∞); lower-case constants (`id`, dot-notation functions such as `f.range`) and
  constants hidden by notation (`+`, `≤`, `×`) are missed, and so are names made implicit by
  `variable` declarations.
"""

from __future__ import annotations

import re

_IDENT_PART = re.compile(r"[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ]*")
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
_NOTATION = {
    "ℕ": "Nat",
    "ℤ": "Int",
    "ℚ": "Rat",
    "ℝ": "Real",
    "ℂ": "Complex",
    "ℝ≥0": "NNReal",
    "ℝ≥0∞": "ENNReal",
    "Type*": "Type",
}
_TOKEN = re.compile(r"ℝ≥0∞|ℝ≥0|[ℕℤℚℝℂ]|Type\*|«[^»]*»|[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ.]*")
_VARIABLE = re.compile(r"[A-Z][₀-₉']*")
_BINDER = re.compile(r"[({\[⦃]\s*([^:(){}\[\]⦃⦄]*?)\s*:")


def lean_name(name: str) -> str:
    """A name with the «» quotes Lean would not print removed."""

    def unquote(m: re.Match[str]) -> str:
        inner = m.group(1)
        ok = _IDENT_PART.fullmatch(inner) and inner not in _KEYWORDS
        return inner if ok else m.group(0)

    return _QUOTED.sub(unquote, name) if "«" in name else name


def _top_level_colon(statement: str) -> int:
    depth = 0
    for i, ch in enumerate(statement):
        if ch in "([{⟨⦃":
            depth += 1
        elif ch in ")]}⟩⦄":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and statement[i : i + 2] != ":=":
            return i
    return -1


def instance_base_name(statement: str, namespace: list[str]) -> str:
    """`inst…` for an anonymous instance whose source statement (binders, `:`, class) is
    given, declared inside `namespace` (see the module docstring for where it is approximate)."""
    colon = _top_level_colon(statement)
    binders, target = (statement[:colon], statement[colon + 1 :]) if colon >= 0 else ("", statement)
    bound = {v for group in _BINDER.findall(binders) for v in group.split()}
    in_namespace = {".".join(namespace[: i + 1]) for i in range(len(namespace))}
    in_namespace |= set(namespace[-1:])
    seen: list[str] = []
    for tok in _TOKEN.findall(target):
        tok = _NOTATION.get(tok, tok)
        tok = lean_name(tok).strip(".")
        if tok in bound or tok in in_namespace or _VARIABLE.fullmatch(tok):
            continue
        last = tok.rsplit(".", 1)[-1]
        if not last or not last[0].isupper():
            continue
        part = last[0].upper() + last[1:]
        if part not in seen:
            seen.append(part)
    return "inst" + "".join(seen)
