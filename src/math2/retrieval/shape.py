"""Formula-shape tokens: what a statement looks like once its variables' names are forgotten.

BM25 over words matches the names of variables (`x`, `n`) that differ between a query and
Mathlib's statement, and gives operators (`+`, `=`, `≤`), which are in everything, almost no
weight. A formula-retrieval engine indexes the formula's *shape* instead; this module makes
those tokens, read by the one Lean lexer (`math2.lean.lexer.tokenize`):

- **What is read.** A declaration's statement is split at its first top-level `:` (outside
  brackets). Before it are the binders: their names are the statement's variables, and an
  explicit binder whose names all start with `h` or `H` (Mathlib's convention for
  hypotheses, `(hk : k ≤ n)`) is a hypothesis and enters as `T →`, as a query would write it
  (`Nat.Prime p → 2 ≤ p` meets `(hp : p.Prime) : 2 ≤ p`); the others (types, instances) do not
  enter. After it is the type, with a leading `∀ x y : T,` dropped (its names bound too).
  A query is read the same way, after its LaTeX is read as Lean would write it
  (`latex_formula`), products by juxtaposition are made explicit and its prose is taken out
  (`formula_text`).
- **Variables.** An identifier is a variable if the statement binds it (a binder, or after
  `∀ ∃ fun λ ∑ ∏ ⋃ ⋂ ⨆ ⨅`), or if it is short: one or two ASCII or Greek letters, primes,
  digits and subscripts aside (`a`, `x₁`, `hf`, `α`, `s'`), `π` and Lean keywords excepted —
  Mathlib's `variable`s are not in a statement's text, and a query binds nothing. Dot notation
  on a variable is an application: `s.card` reads as `card s`.
- **Order**: `a ≥ b` reads `b ≤ a`, `a > b` reads `b < a` (`orient`), as Mathlib states them.
- **Constants** stay, by their last name part (`Nat.choose` and `choose` after `open Nat` are
  the same token), and so do notation symbols, numbers and brackets.
- **Tokens** are the n-grams (`SIZES`: 2 to 4) of that sequence, in two layers. In the
  *literal* layer the numerals 0, 1 and 2 stay (`x ^ 2`, `0 < x` are shapes of their own) and
  other numerals are `#`. In the *abstract* layer every numeral is an operand like a variable,
  so `2 + 3 = 3 + 2` has the shape of `a + b = b + a` (the general lemma of a special case);
  only its n-grams that differ from the literal layer's are added. Inside each n-gram the
  variables (and, in the abstract layer, the numerals) are numbered by first occurrence
  (`= b + a` → `= v1 + v2`, `a * a` → `v1 * v1`): equal operands stay visible, and a gram
  means the same wherever it stands in the statement.
"""

from __future__ import annotations

import itertools
import re

from math2.lean.brackets import depths, top_level
from math2.lean.lexer import LexError, Tok, Token, tokenize
from math2.retrieval.latex import to_lean
from math2.retrieval.text import fold_accents, prose_tokens

SIZES = (2, 3, 4)
LITERALS = frozenset({"0", "1", "2"})
_OPEN = "([{⟨⦃"
_CLOSE = ")]}⟩⦄"
_BINDERS = frozenset({"∀", "∃", "∃!", "fun", "λ", "∑", "∏", "⋃", "⋂", "⨆", "⨅"})
_KEYWORDS = frozenset({"fun", "if", "then", "else", "let", "have", "show", "from", "by", "at"})
_KEYWORDS |= {"in", "do", "with", "match", "Type", "Prop", "Sort"}
_SUB = re.compile(r"['!?0-9\u2080-\u209c\u1d62-\u1d6a]+$")
_SHORT = re.compile(r"[A-Za-z\u0391-\u03a9\u03b1-\u03c9]{1,2}")
# Subscripts after notation (`|a|ₘ`, to_additive's spelling) and LaTeX's `_` of `\\sum_{i}`.
_NOISE = frozenset({"ₘ", "ₐ", "_"})
_VAR = "·v"
_NUM = "#"
# A LaTeX `\cdot` is a product and `\|` a norm, whatever Mathlib's `•` means.


def is_short_variable(name: str) -> bool:
    """`a`, `x₁`, `hf`, `α`, `s'`: a name that reads as a local variable (not `π`, `id`, `if`)."""
    if "." in name or name in _KEYWORDS or name in ("π", "id"):
        return False
    return bool(_SHORT.fullmatch(_SUB.sub("", name)))


def _lex(text: str) -> list[Token]:
    try:
        return tokenize(text)
    except LexError:
        return []


def _groups(toks: list[Token]) -> list[list[Token]]:
    """Top-level items: a bracket group (with its brackets) or a single token (nesting read by
    `math2.lean.brackets`)."""
    out: list[list[Token]] = []
    for t, depth in zip(toks, depths(toks), strict=True):
        if depth == 0:
            out.append([t])
        else:
            out[-1].append(t)
    return out


def _split_colon(toks: list[Token]) -> tuple[list[Token], list[Token]]:
    """(binders, type): at the first `:` outside brackets; no such `:` means all is type."""
    colons = [i for i in top_level(toks, {":"}) if toks[i].kind is Tok.SYMBOL]
    return (toks[: colons[0]], toks[colons[0] + 1 :]) if colons else ([], toks)


def _binder_names(group: list[Token]) -> tuple[list[str], list[Token]]:
    """A binder group `(a b : T)` → (names, type tokens)."""
    inner = group[1:-1] if len(group) > 1 else group
    names: list[str] = []
    for i, t in enumerate(inner):
        if t.kind is Tok.IDENT:
            names.append(t.text)
        elif t.text == ":":
            return names, inner[i + 1 :]
        else:
            break
    return [], inner


def _read(toks: list[Token]) -> tuple[list[Token], set[str]]:
    """The sequence a shape is made of (hypothesis binders as `T →`, then the type without a
    leading `∀ …,`) and the names the statement binds."""
    head, body = _split_colon(toks)
    bound: set[str] = set()
    seq: list[Token] = []
    for g in _groups(head):
        if g[0].text not in "({⦃[" or len(g) < 3:
            continue
        names, typ = _binder_names(g)
        bound.update(names)
        if g[0].text == "(" and names and all(n[0] in "hH" for n in names):
            seq += [*typ, Token(Tok.SYMBOL, "→", 0, 0, 0)]
    while body and body[0].text == "∀":  # `∀ a b : G,` bound, dropped
        end = next(iter(top_level(body, {","})), None)
        if end is None:
            break
        bound.update(t.text for t in body[1:end] if t.kind is Tok.IDENT)
        body = body[end + 1 :]
    seq += body
    for a, b in itertools.pairwise(seq):
        if a.text in _BINDERS and b.kind is Tok.IDENT:
            bound.add(b.text)
    return seq, bound


def shape_sequence(text: str | None) -> list[str]:
    """The shape of a statement before n-grams: `·v` for a variable, `#` for a numeral outside
    0, 1, 2, constants by their last part, symbols as written (see the module docstring)."""
    if not text:
        return []
    seq, bound = _read(_lex(text))
    out: list[str] = []
    for t in seq:
        if t.text in _NOISE:
            continue
        if t.kind is Tok.IDENT:
            first, _, rest = t.text.partition(".")
            if first in bound or is_short_variable(first):
                if rest:  # `s.card` → `card s`
                    out += [rest.rsplit(".", 1)[-1], _VAR + first]
                else:
                    out.append(_VAR + first)
            else:
                out.append(t.text.replace("«", "").replace("»", "").rsplit(".", 1)[-1])
        elif t.kind is Tok.NUMBER:
            out.append(t.text if t.text in LITERALS else _NUM + t.text)
        elif t.kind is Tok.SYMBOL:
            out.append(t.text)
        elif t.kind is not Tok.DOC:
            out.append(t.kind.value)  # a string or character literal
    return orient(out)


def orient(seq: list[str]) -> list[str]:
    """`a ≥ b` → `b ≤ a` and `a > b` → `b < a` (Mathlib states `≤`/`<`): in each part of the
    sequence between top-level `→ ↔ ∧ ∨ ,` that has exactly one top-level relation, and that
    one `≥` or `>`, the two sides swap (not in a binder's `∃ x > 0`, which Mathlib writes too)."""
    out: list[str] = []
    part: list[str] = []
    depth = 0

    def flush() -> None:
        d, rel = 0, []
        for i, x in enumerate(part):
            d += (x in _OPEN) - (x in _CLOSE)
            if d == 0 and x in _RELATIONS:
                rel.append(i)
        if len(rel) == 1 and part[rel[0]] in _FLIP and part[0] not in _BINDERS:
            i = rel[0]
            part[:] = [*part[i + 1 :], _FLIP[part[i]], *part[:i]]
        out.extend(part)
        part.clear()

    for x in seq:
        depth += (x in _OPEN) - (x in _CLOSE)
        if depth == 0 and x in _CONNECTIVES:
            flush()
            out.append(x)
        else:
            part.append(x)
    flush()
    return out


_RELATIONS = frozenset({"=", "≠", "≤", "<", "≥", ">", "∣", "∈", "∉", "⊆", "⊂", "↔", "≃", "≡"})
_FLIP = {"≥": "≤", ">": "<"}
_CONNECTIVES = frozenset({"→", "↔", "∧", "∨", ","})


def _gram(seq: list[str], abstract: bool) -> str:
    """One n-gram, its variables (and with `abstract` its numerals) numbered in the window."""
    seen: dict[str, str] = {}
    out = []
    for s in seq:
        if s.startswith(_VAR) or (abstract and s.startswith(_NUM)) or (abstract and s.isdigit()):
            out.append(seen.setdefault(s, f"v{len(seen) + 1}"))
        elif s.startswith(_NUM):
            out.append(_NUM)
        else:
            out.append(s)
    return " ".join(out)


def grams(seq: list[str], sizes: tuple[int, ...] = SIZES) -> list[str]:
    """The literal and abstract n-grams of a shape sequence (a sequence shorter than every size
    is one gram)."""
    out: list[str] = []
    for abstract in (False, True):
        layer = []
        for n in sizes:
            if len(seq) < n and n == min(sizes) and len(seq) > 0:
                layer.append(_gram(seq, abstract))
            for i in range(len(seq) - n + 1):
                layer.append(_gram(seq[i : i + n], abstract))
        if abstract:
            lit = set(out)
            layer = [g for g in layer if g not in lit]
        out += layer
    return out


def shape_tokens(text: str | None, sizes: tuple[int, ...] = SIZES) -> list[str]:
    """The shape tokens of a statement (a declaration's, or a query's formula)."""
    return grams(shape_sequence(text), sizes)


def definition_shape_tokens(
    statement: str | None, body: list[str] | tuple[str, ...], kind: str | None = None
) -> list[str]:
    """The shape tokens of what a definition says (index text v9): each clause of its `body`
    read as a statement with the declaration's binders. A def's value `v` reads as
    `binders : v` (`∀ x, f (x + c) = f x` under `(f : α → β) (c : α)`); a field or
    constructor `name rest` reads as `binders rest` (`le_refl : ∀ a : α, a ≤ a`)."""
    if not body:
        return []
    toks = _lex(statement or "")
    end = 0
    for g in _groups(toks):  # the leading binder groups
        if g[0].text not in "({⦃[" or len(g) < 3:
            break
        end = g[-1].offset + len(g[-1].text)
    binders = (statement or "")[:end]
    out: list[str] = []
    named = kind not in ("def", "abbrev", "irreducible_def")
    for clause in body:
        if named:
            head = _lex(clause)
            if not head or head[0].kind is not Tok.IDENT:
                continue
            rest = clause[head[0].offset + len(head[0].text) :]
            if ":" not in rest:
                continue
            text = f"{binders} {rest}"
        else:
            text = f"{binders} : {clause}"
        out += shape_tokens(text)
    return out


def latex_formula(query: str) -> str:
    """LaTeX as a formula the lexer reads like Lean (`latex.to_lean`: `\\frac{a}{b}` → `(a) /
    (b)`, `x^{n+1}` → `x ^ (n+1)`, `\\cdot` → `*`, `\\|` → `‖`), `e^x` read as `exp x`."""
    return _E_POWER.sub(" exp ", to_lean(query))


def formula_text(query: str) -> str:
    """A query's formula parts: LaTeX rewritten (`latex_formula`), a product written by
    juxtaposition made explicit (`2xy` → `2 * x * y`; in LaTeX also `e^x e^y`, `(x+3)(x-3)`),
    and runs of prose words taken out (`if p is prime then 2 ≤ p` → `2 ≤ p`; a query that is all
    prose leaves nothing). A run of plain words is prose when at least half of it is English
    words of three letters or more (`text.prose_tokens`) or short function words."""
    latex = "\\" in query or "$" in query
    if latex:
        query = latex_formula(query)
    query = _NUMBER_LETTERS.sub(lambda m: " * ".join([m.group(1), *m.group(2)]), query)
    toks = _juxtapose(_lex(query), latex)
    prose = {w.lower() for w in _PROSE_WORDS.findall(query)} - _FUNCTIONS | _FUNCTION_WORDS
    keep = [True] * len(toks)
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and toks[j].kind is Tok.IDENT and "." not in toks[j].text:
            j += 1
        run = toks[i:j]
        if len(run) >= 2 and 2 * sum(t.text.lower() in prose for t in run) >= len(run):
            for k in range(i, j):
                keep[k] = False
        i = max(j, i + 1)
    return " ".join(t.text for t, k in zip(toks, keep, strict=True) if k)


def _juxtapose(toks: list[Token], latex: bool) -> list[Token]:
    """In LaTeX, `*` between operands written side by side: a variable, a number or `)` before a
    variable (`xy` is `x * y`) or a function (`e^x e^y` → `exp x * exp y`), a number or `)`
    before `(`."""
    if not latex:
        return toks
    out: list[Token] = []
    for t in toks:
        if t.kind is Tok.IDENT and len(t.text) == 2 and is_short_variable(t.text):  # `xy`
            parts = [Token(Tok.IDENT, c, t.line, t.col, t.offset) for c in t.text]
        else:
            parts = [t]
        for p in parts:
            if (
                out
                and _operand_end(out[-1])
                and (
                    _is_var(p)
                    or p.text in _FUNCTIONS
                    or (p.text == "(" and out[-1].kind is not Tok.IDENT)
                )
            ):
                out.append(Token(Tok.SYMBOL, "*", p.line, p.col, p.offset))
            out.append(p)
    return out


def _is_var(t: Token) -> bool:
    return t.kind is Tok.IDENT and is_short_variable(t.text) and len(t.text) == 1


def _operand_end(t: Token) -> bool:
    return _is_var(t) or t.kind is Tok.NUMBER or t.text == ")"


_E_POWER = re.compile(r"(?<![\w\\])e\s*\^")
_NUMBER_LETTERS = re.compile(r"(?<![\w.])(\d+)([a-z]{1,3})(?![\w(])")
# Names of functions a formula applies (`log x`), never prose: LaTeX's operator names and a few
# of Mathlib's.
_FUNCTIONS = frozenset({
    "log", "exp", "sin", "cos", "tan", "det", "dim", "ker", "gcd", "lcm", "deg", "degree", "max",
    "min", "sup", "inf", "lim", "mod", "choose", "sqrt", "deriv", "card", "abs", "norm", "rank",
    "sinh", "cosh", "arctan", "arcsin", "arccos", "floor", "ceil", "fib", "succ", "pred",
})  # fmt: skip
_PROSE_WORDS = re.compile(r"(?<![\\\w.])[A-Za-z][a-z]{2,}(?![\w.])")
_FUNCTION_WORDS = frozenset({
    "if", "is", "of", "an", "the", "to", "for", "all", "be", "then", "any", "every", "there",
    "such", "that", "in", "on", "by", "as", "it", "are", "and", "or", "not", "its", "has",
    "have", "with",
})  # fmt: skip


def query_shape(
    query: str, sizes: tuple[int, ...] = SIZES, folded: bool = True
) -> tuple[list[str], float]:
    """A query's shape tokens and the share of it that is formula (1 − its prose share): the
    shape score's weight is `W_SHAPE` times that share, so a sentence is untouched. With
    `folded` (index text v6+) accented prose reads as prose (`théorème de Bézout`)."""
    if folded:
        query = fold_accents(query)
    _, share = prose_tokens(query)
    toks = list(dict.fromkeys(shape_tokens(formula_text(query), sizes)))
    return toks, 1.0 - share


__all__ = [
    "LITERALS", "SIZES", "definition_shape_tokens", "formula_text", "grams",
    "is_short_variable", "query_shape",
    "shape_sequence", "shape_tokens",
]  # fmt: skip
