"""The shape of a Lean theorem statement, read from `math2.lean`'s tokens (never raw regexes).

`parse_statement(code)` splits the code into commands with `math2.lean`'s command splitter (the
one hygiene uses), takes the **target** declaration — the one named `name` when given, else the
last `theorem`/`lemma`/`example`, else the last definition — and splits it into binders (each
with its bracket, names and type tokens) and the goal tokens up to `:=`. Definitions and
instances before the target are context, never linted. A target that is a `structure`,
`class`, `inductive` or `instance`, or a definition with no type to read, raises `NotAStatement`
(the lints then skip). Binders are told
apart as variables (`(x y : ℝ)`), hypotheses (`(h : 0 < x)`, a proposition) and instances
(`[Group G]`). This is a lexical reading, good enough for lints: it does not elaborate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from math2.lean.brackets import depths, matching, proof_start
from math2.lean.brackets import top_level as brackets_top_level
from math2.lean.commands import Command, split_commands
from math2.lean.lexer import LexError, Tok, Token, tokenize

__all__ = [
    "Binder",
    "NotAStatement",
    "Statement",
    "StatementError",
    "parse_statement",
    "texts",
]

_OPEN = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "⟨": "⟩"}
_THEOREMS = {"theorem", "lemma", "example"}
_DEFS = {"def", "abbrev"}
_NOT_STATEMENTS = {"structure", "class", "inductive", "instance", "axiom", "opaque"}
# tokens that make a binder's type a proposition
_PROP = {"=", "≠", "<", ">", "≤", "≥", "<=", ">=", "∣", "∈", "∉", "⊆", "⊂", "⊇", "↔", "∧", "∨"}
_PROP |= {"¬", "∀", "∃", "∃!", "False", "True", "≡"}
_TYPES = {"ℕ", "ℤ", "ℚ", "ℝ", "ℂ", "Nat", "Int", "Rat", "Real", "Complex", "Type", "Sort", "Prop"}
_TYPES |= {"Set", "Finset", "Fin", "List", "Multiset", "Polynomial", "Matrix", "ZMod"}


class StatementError(ValueError):
    """No theorem statement could be read (no declaration, unbalanced brackets, lexer error)."""


class NotAStatement(StatementError):
    """The target declaration is not a statement a lint reads (a structure, an instance, …)."""


@dataclass
class Binder:
    bracket: str  # ( { [ ⦃
    names: list[str]
    type: list[Token]

    @property
    def is_instance(self) -> bool:
        return self.bracket == "["

    @property
    def is_hypothesis(self) -> bool:
        if self.is_instance:
            return False
        kinds = {t.text for t in self.type}
        if kinds & _PROP:
            return True
        first = self.type[0].text if self.type else ""
        named_h = bool(self.names) and all(n.startswith("h") for n in self.names)
        return named_h and first not in _TYPES and "→" not in kinds

    @property
    def is_variable(self) -> bool:
        return not self.is_instance and not self.is_hypothesis


@dataclass
class Statement:
    kind: str  # theorem / lemma / example
    name: str
    binders: list[Binder] = field(default_factory=list)
    goal: list[Token] = field(default_factory=list)

    @property
    def hypotheses(self) -> list[tuple[str, Binder]]:
        """(name, binder) per hypothesis name (an anonymous one is named `_`)."""
        out = []
        for b in self.binders:
            if b.is_hypothesis:
                out += [(n, b) for n in (b.names or ["_"])]
        return out

    @property
    def variables(self) -> dict[str, Binder]:
        return {n: b for b in self.binders if b.is_variable for n in b.names}


def texts(toks: list[Token]) -> list[str]:
    return [t.text for t in toks]


def _match(toks: list[Token], i: int) -> int:
    """Index of the bracket closing the one at i (`math2.lean.brackets`)."""
    j = matching(toks, i)
    if j is None:
        raise StatementError(f"line {toks[i].line}: unbalanced {toks[i].text!r}")
    return j


def _name(c: Command) -> str:
    body = [t for t in c.body if t.kind is not Tok.DOC]
    return body[0].text if body and body[0].kind is Tok.IDENT else ""


def target_command(code: str, name: str | None = None) -> Command:
    """The declaration a pair is about (see the module docstring)."""
    try:
        toks = tokenize(code)
    except LexError as e:
        raise StatementError(str(e)) from None
    decls = [c for c in split_commands(toks) if c.keyword in _THEOREMS | _DEFS | _NOT_STATEMENTS]
    if name:
        named = [c for c in decls if _name(c) in (name, name.split(".")[-1])]
        if named:
            return named[-1]
    for kinds in (_THEOREMS, _DEFS | _NOT_STATEMENTS):
        found = [c for c in decls if c.keyword in kinds]
        if found:
            return found[-1]
    raise StatementError("no theorem, lemma or example")


def parse_statement(code: str, name: str | None = None) -> Statement:
    """The target declaration of `code`, split into binders and goal."""
    cmd = target_command(code, name)
    kind = cmd.keyword
    if kind in _NOT_STATEMENTS:
        raise NotAStatement(f"the target is a {kind}, not a statement")
    toks = [t for t in cmd.tokens[cmd.keyword_index :] if t.kind is not Tok.DOC]
    try:
        return _parse_decl(toks)
    except StatementError as e:
        if kind in _DEFS:  # `def f := …`, `def f : T where …`: nothing a lint reads
            raise NotAStatement(f"a {kind} without a statement to read ({e})") from None
        raise


def _parse_decl(toks: list[Token]) -> Statement:
    kind = toks[0].text
    i = 1
    name = ""
    if kind != "example" and i < len(toks) and toks[i].kind is Tok.IDENT:
        name = toks[i].text
        i += 1
    if i < len(toks) and toks[i].text == ".{":  # universe parameters (rare)
        i = _match(toks, i) + 1
    st = Statement(kind=kind, name=name)
    while i < len(toks) and toks[i].kind is Tok.SYMBOL and toks[i].text in _OPEN:
        j = _match(toks, i)
        inner = toks[i + 1 : j]
        level = depths(inner)
        colon = next((k for k, t in enumerate(inner) if t.text == ":" and level[k] == 0), None)
        if colon is None:
            st.binders.append(Binder(toks[i].text, [], inner))
        else:
            names = [t.text for t in inner[:colon] if t.kind is Tok.IDENT]
            st.binders.append(Binder(toks[i].text, names, inner[colon + 1 :]))
        i = j + 1
    if i >= len(toks) or toks[i].text != ":":
        raise StatementError(f"{name or kind}: no ':' before the goal")
    i += 1
    # the goal ends at the `:=` that ends the statement, not one of a `let`/`have` inside it
    rest = toks[i:]
    stop = proof_start(rest)
    goal = list(rest if stop is None else rest[:stop])
    if not goal:
        raise StatementError(f"{name or kind}: empty goal")
    st.goal = goal
    return st


def top_level(toks: list[Token], symbols: set[str]) -> list[int]:
    """Indexes of tokens in `symbols` at bracket depth 0 (`math2.lean.brackets`)."""
    return brackets_top_level(toks, symbols)


def strip_parens(toks: list[Token]) -> list[Token]:
    """Remove brackets that enclose the whole expression."""
    while len(toks) >= 2 and toks[0].text == "(" and _match(toks, 0) == len(toks) - 1:
        toks = toks[1:-1]
    return toks


def names_in(toks: list[Token]) -> set[str]:
    """Identifiers of an expression, with the head of a dotted one (`x.1` → `x`, `f.comp`)."""
    out = set()
    for t in toks:
        if t.kind is Tok.IDENT:
            out.add(t.text)
            out.add(t.text.split(".")[0])
    return out
