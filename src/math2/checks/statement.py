"""The shape of a Lean theorem statement, read from `math2.lean`'s tokens (never raw regexes).

`parse_statement(code)` reads the code with the one statement reader (`math2.lean.reader`): the
**target** declaration — the one named `name` when given, else the last
`theorem`/`lemma`/`example`, else the last definition — its binders (each with its bracket,
names and type tokens) and the goal tokens up to the `:=` of its proof. Definitions and
instances before the target are context, never linted. A target that is a `structure`,
`class`, `inductive` or `instance`, or a definition with no type to read, raises `NotAStatement`
(the lints then skip). Binders are told
apart as variables (`(x y : ℝ)`), hypotheses (`(h : 0 < x)`, a proposition) and instances
(`[Group G]`). This is a lexical reading, good enough for lints: it does not elaborate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from math2.lean.brackets import balanced, matching, opens
from math2.lean.brackets import top_level as brackets_top_level
from math2.lean.lexer import Tok, Token
from math2.lean.reader import NoStatement, read_statement
from math2.lean.targets import declaration_name

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


def parse_statement(code: str, name: str | None = None) -> Statement:
    """The target declaration of `code` (the one statement reader, `math2.lean.reader`), as the
    lints read it: binders and goal."""
    try:
        st = read_statement(code, name)
    except NoStatement as e:
        why = "no theorem, lemma or example" if str(e) == "no declaration" else str(e)
        raise StatementError(why) from None
    cmd = st.command
    assert cmd is not None  # read_statement always names the command it read
    body = cmd.body
    if not balanced(body):
        bad = next((t for i, t in enumerate(body) if opens(t) and matching(body, i) is None), None)
        where = f"line {bad.line}: unbalanced {bad.text!r}" if bad else "unbalanced brackets"
        raise StatementError(where)
    kind = st.keyword
    if kind in _NOT_STATEMENTS:
        raise NotAStatement(f"the target is a {kind}, not a statement")
    label = st.name or kind
    if not st.conclusion:
        why = f"{label}: no ':' before the goal" if st.proof is not None else f"{label}: no goal"
        if kind in _DEFS:  # `def f := …`, `def f : T where …`: nothing a lint reads
            raise NotAStatement(f"a {kind} without a statement to read ({why})")
        raise StatementError(why)
    binders = [Binder(b.bracket, [n.text for n in b.names], b.type) for b in st.binders]
    written = declaration_name(cmd)
    return Statement(
        kind=kind,
        name=written.text if written is not None and kind != "example" else "",
        binders=binders,
        goal=list(st.conclusion),
    )


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
