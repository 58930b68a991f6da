"""A term as Lean's pretty-printer writes it, read into a small tree with the one lexer.

`math2.lean.elaborated` asks Lean for a target's type under `pp.all`, `pp.explicit` and
`pp.instanceTypes` (docs/lean.md, "The elaborated statement"): then every application is
written in full (`@f a b`), no notation is left, and every instance-implicit argument is printed
as an ascription `(term : Class args)` — the delaborator's rule (`delabAppExplicitCore`: an
inst-implicit parameter's argument is wrapped in a type ascription when `pp.instanceTypes` is
on). So an `Asc` node in argument position is exactly an instance argument. Names are full
(`pp.fullNames`); universe lists `.{u}` are skipped.

`read(text, notation=False)` gives the tree, or raises `Unreadable` with the reason: a real
Lean under those options prints no infix operator but `→`, no `⋯`, no `?m`, no `by`, so any of
them is unreadable. `notation=True` reads the test doubles' answers (they print what a block
wrote, notation included): an operator is then an opaque node whose operands are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from math2.lean.lexer import LexError, Tok, Token, tokenize


class Unreadable(ValueError):
    """An answer math2 cannot read; the message says where and why."""


@dataclass
class Term:
    """One node: `kind` is name | lit | hole | app | asc | bind | let | anon | struct | proj |
    op | paren; `text` the name, literal, binder keyword or operator; `args` the children."""

    kind: str
    text: str = ""
    args: list[Term] = field(default_factory=list)
    binders: list[Binder] = field(default_factory=list)
    explicit: bool = False  # `@name`


@dataclass
class Binder:
    """A binder group: names, their type (None: none written), its bracket (`(`, `{`, `[`, `⦃`,
    or '' for a bare name)."""

    names: list[str]
    type: Term | None
    bracket: str


BINDER_WORDS = frozenset({"∀", "Π", "λ", "fun", "∃", "Σ", "∃!"})
_OPEN = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "⟨": "⟩"}
_STOP = frozenset({")", "}", "]", "⦄", "⟩", ",", ":", ":=", "=>", "↦", ";", "|"})
_SORTS = frozenset({"Type", "Sort"})


def read(text: str, *, notation: bool = False) -> Term:
    """The tree of one printed term."""
    try:
        toks = tokenize(text)
    except LexError as exc:
        raise Unreadable(f"does not lex: {exc}") from None
    p = _Parser(toks, notation)
    term = p.term()
    if p.i < len(p.toks):
        raise Unreadable(f"unexpected {p.toks[p.i].text!r} at column {p.toks[p.i].col}")
    return term


def read_signature(text: str, *, notation: bool = False) -> tuple[str, list[Binder], Term]:
    """`#check @NAME`'s answer: `@NAME.{u} BINDERS : TYPE` (Lean prints binders before the
    colon for a constant's signature, or none and a `∀` type): the name, binders, type."""
    try:
        toks = tokenize(text)
    except LexError as exc:
        raise Unreadable(f"does not lex: {exc}") from None
    p = _Parser(toks, notation)
    p.accept("@")
    head = p.peek()
    if head is None or head.kind is not Tok.IDENT:
        raise Unreadable("the answer does not start with the constant's name")
    p.i += 1
    p.universes(head)
    binders = p.binder_groups(until=":")
    if not p.accept(":"):
        raise Unreadable("no `:` after the constant's name")
    body = p.term()
    if p.i < len(p.toks):
        raise Unreadable(f"unexpected {p.toks[p.i].text!r} at column {p.toks[p.i].col}")
    return head.text, binders, body


class _Parser:
    def __init__(self, toks: list[Token], notation: bool):
        self.toks = _inaccessible([t for t in toks if t.kind is not Tok.DOC])
        self.i = 0
        self.notation = notation
        self.items = 0  # how many `⟨…⟩`/tuple item lists are open

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def accept(self, text: str) -> bool:
        t = self.peek()
        if t is not None and t.text == text and t.kind is not Tok.STRING:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            t = self.peek()
            got = repr(t.text) if t else "the end"
            raise Unreadable(f"expected {text!r}, found {got}")

    def universes(self, name: Token) -> None:
        """Skip `.{u, v}` written right after a name."""
        a, b = self.peek(), self.peek(1)
        end = name.offset + len(name.text)
        if a is not None and b is not None and a.text == "." and a.offset == end and b.text == "{":
            self.i += 1
            self.balanced()

    def balanced(self) -> list[Token]:
        """The tokens of a bracketed group (the current token opens it), brackets excluded."""
        opener = self.toks[self.i]
        close = _OPEN[opener.text]
        depth, start = 0, self.i
        while self.i < len(self.toks):
            t = self.toks[self.i]
            if t.kind is Tok.SYMBOL and t.text in _OPEN:
                depth += 1
            elif t.kind is Tok.SYMBOL and t.text in _OPEN.values():
                depth -= 1
                if depth == 0:
                    if t.text != close:
                        raise Unreadable(f"{opener.text!r} closed by {t.text!r}")
                    self.i += 1
                    return self.toks[start + 1 : self.i - 1]
            self.i += 1
        raise Unreadable(f"{opener.text!r} at column {opener.col} is never closed")

    def binder_groups(self, until: str) -> list[Binder]:
        self.items += 1  # a `,` ends the binders, never notation inside them
        try:
            out = self._binder_groups(until)
            nxt = self.peek()
            if self.notation and out and nxt is not None and nxt.text not in (until, "↦"):
                # a binder predicate of a double's notation (`∀ x ∈ S, …`, `∃ n > 0, …`)
                out[-1].type = self.app()
            return out
        finally:
            self.items -= 1

    def _binder_groups(self, until: str) -> list[Binder]:
        out: list[Binder] = []
        while (t := self.peek()) is not None and t.text != until:
            if t.kind is Tok.SYMBOL and t.text in ("(", "{", "[", "⦃"):
                self.i += 1
                close = _OPEN[t.text]
                names: list[str] = []
                while (n := self.peek()) is not None and n.kind is Tok.IDENT:
                    names.append(n.text)
                    self.i += 1
                if t.text == "[" and not names and not self.accept(":"):
                    typ = self.term()  # `[C α]`: an anonymous instance binder
                    names = ["_"]
                elif self.accept(":"):
                    typ = self.term()
                elif names:
                    typ = None
                else:
                    raise Unreadable(f"a binder at column {t.col} has no name")
                self.expect(close)
                out.append(Binder(names, typ, t.text))
            elif t.kind is Tok.IDENT and until in (",", "=>"):
                self.i += 1
                if self.accept(":"):  # `∀ x : T, …` / `fun x : T => …`
                    out.append(Binder([t.text], self.term(), ""))
                    break
                out.append(Binder([t.text], None, ""))
            else:
                break
        return out

    def term(self) -> Term:
        t = self.peek()
        if t is None:
            raise Unreadable("a term is missing at the end")
        if t.text in BINDER_WORDS and t.kind is not Tok.STRING:
            self.i += 1
            sep = "=>" if t.text in ("fun", "λ") else ","
            binders = self.binder_groups(until=sep)
            if not (self.accept(sep) or (sep == "=>" and self.accept("↦"))):
                raise Unreadable(f"`{t.text}` at column {t.col} has no {sep!r}")
            return Term("bind", t.text, [self.term()], binders)
        if t.kind is Tok.SYMBOL and t.text in ("(", "{", "[", "⦃") and self._arrow_binder():
            binders = self.binder_groups(until="→")
            self.expect("→")
            return Term("bind", "→", [self.term()], binders)
        if t.text in ("let", "have", "letI", "haveI") and t.kind is Tok.IDENT:
            self.i += 1
            name = self.peek()
            if name is None or (name.kind is not Tok.IDENT and name.text != ":"):
                raise Unreadable(f"`{t.text}` at column {t.col} binds no name")
            bound = name.text if name.kind is Tok.IDENT else "this"  # `letI : C := …`
            self.i += name.kind is Tok.IDENT
            typ = self.term() if self.accept(":") else None
            self.expect(":=")
            value = self.term()
            self.expect(";")
            body = self.term()
            binders = [Binder([bound], typ, "")]
            return Term("let", t.text, [value, body], binders)
        left = self.app()
        nxt = self.peek()
        if nxt is not None and nxt.kind is Tok.SYMBOL and nxt.text == "→":
            self.i += 1
            return Term("op", "→", [left, self.term()])
        return left

    def depth_ok(self) -> bool:
        """Whether a `,` or `|` may be read as notation here: not inside `⟨…⟩` or a tuple,
        where it separates items (the parser's own loops read those)."""
        return not self.items

    def _arrow_binder(self) -> bool:
        """Whether a bracket opens a dependent arrow's binder (`(x : α) → β x`, `[C α] → …`):
        names and `:` inside (or `[…]`), and `→` right after the closing bracket."""
        start = self.i
        try:
            opener = self.toks[self.i]
            inside = self.balanced()
            after = self.peek()
        except Unreadable:
            return False
        finally:
            self.i = start
        if after is None or after.text != "→":
            return False
        names = 0
        while names < len(inside) and inside[names].kind is Tok.IDENT:
            names += 1
        return opener.text == "[" or (0 < names < len(inside) and inside[names].text == ":")

    def app(self) -> Term:
        atoms: list[Term] = []
        while (t := self.peek()) is not None:
            notation_sep = self.notation and t.text in (",", "|") and self.depth_ok()
            if t.kind is not Tok.STRING and t.text in _STOP and not notation_sep:
                break
            if t.kind is Tok.SYMBOL and t.text == "→":
                break
            if t.text in BINDER_WORDS and t.kind is not Tok.STRING:
                atoms.append(self.term())  # `@Exists α fun x => …`: the last argument
                break
            if self.notation and (_operator(t) or t.text in (",", "|")):
                # a double's notation (`g⁻¹`, `‖x‖`, `|x|`, `∑ i ∈ s, f i`): an opaque token
                self.i += 1
                atoms.append(Term("op", t.text))
                continue
            atoms.append(self.atom())
        if not atoms:
            t = self.peek()
            raise Unreadable(f"a term is missing before {t.text!r}" if t else "a term is missing")
        return atoms[0] if len(atoms) == 1 else Term("app", "", atoms)

    def atom(self) -> Term:
        t = self.toks[self.i]
        if t.kind is Tok.SYMBOL and t.text == "@":
            self.i += 1
            n = self.peek()
            if n is None or n.kind is not Tok.IDENT:
                raise Unreadable(f"`@` at column {t.col} is not before a name")
            self.i += 1
            self.universes(n)
            return self.postfix(Term("name", n.text, explicit=True))
        if t.kind is Tok.IDENT:
            self.i += 1
            if t.text == "by":
                raise Unreadable(f"a tactic block (`by`) at column {t.col}")
            if t.text == "_":
                return Term("hole")
            self.universes(t)
            if t.text in _SORTS:
                lvl = self.peek()
                if lvl is not None and lvl.text == "(":
                    self.balanced()
                elif lvl is not None and lvl.kind in (Tok.IDENT, Tok.NUMBER):
                    self.i += 1
                return Term("name", t.text)
            return self.postfix(Term("name", t.text))
        if t.kind in (Tok.NUMBER, Tok.STRING, Tok.CHAR):
            self.i += 1
            return self.postfix(Term("lit", t.text))
        if t.kind is Tok.SYMBOL and t.text == "(":
            self.i += 1
            if self.accept(")"):
                return Term("lit", "()")
            nxt, after = self.peek(), self.peek(1)
            if self.notation and nxt and after and nxt.kind is Tok.IDENT and after.text == ":=":
                self.i += 2  # a double's named argument `(α := G)`, as the block wrote it
                value = self.term()
                self.expect(")")
                return Term("paren", nxt.text, [value])
            self.items += 1
            inner = self.term()
            if self.accept(":"):
                typ = self.term()
                self.items -= 1
                self.expect(")")
                return self.postfix(Term("asc", "", [inner, typ]))
            items = [inner]
            while self.notation and self.accept(","):
                items.append(self.term())
            self.items -= 1
            self.expect(")")
            node = inner if len(items) == 1 else Term("anon", "()", items)
            return self.postfix(Term("paren", "", [node]))
        if t.kind is Tok.SYMBOL and t.text == "⟨":
            self.i += 1
            self.items += 1
            nxt = self.peek()
            items = [] if nxt is not None and nxt.text == "⟩" else [self.term()]
            while self.accept(","):
                items.append(self.term())
            self.items -= 1
            self.expect("⟩")
            return self.postfix(Term("anon", "⟨⟩", items))
        if t.kind is Tok.SYMBOL and t.text == "{":
            inside = self.balanced()
            names = [Term("name", x.text) for x in inside if x.kind is Tok.IDENT]
            return self.postfix(Term("struct", "", names))
        if t.kind is Tok.SYMBOL and t.text == "⋯":
            raise Unreadable(f"an elided term (`⋯`) at column {t.col}")
        if t.kind is Tok.SYMBOL and t.text == "?":
            raise Unreadable(f"a metavariable (`?`) at column {t.col}")
        if self.notation and t.kind is Tok.SYMBOL and t.text in ("¬", "-", "↑"):
            self.i += 1
            return Term("op", t.text, [self.atom()])
        raise Unreadable(f"unexpected {t.text!r} at column {t.col}")

    def postfix(self, term: Term) -> Term:
        """`t.1`, `(t).f`: a projection written after a term."""
        while (dot := self.peek()) is not None and dot.text == "." and dot.kind is Tok.SYMBOL:
            f = self.peek(1)
            if f is None or f.kind not in (Tok.NUMBER, Tok.IDENT):
                break
            self.i += 2
            term = Term("proj", f.text, [term])
        return term


def _operator(t: Token) -> bool:
    return (
        t.kind is Tok.SYMBOL
        and t.text not in _OPEN
        and t.text not in _OPEN.values()
        and (t.text not in _STOP and t.text not in ("@", "⋯", "?", ".", "⟨"))
    )


_MARKS = frozenset("✝⁰¹²³⁴⁵⁶⁷⁸⁹")


def _inaccessible(toks: list[Token]) -> list[Token]:
    """`inst✝¹` (a name Lean prints for an inaccessible variable) as one identifier."""
    out: list[Token] = []
    for t in toks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.kind is Tok.IDENT
            and t.kind is Tok.SYMBOL
            and all(c in _MARKS for c in t.text)
            and prev.offset + len(prev.text) == t.offset
        ):
            out[-1] = Token(Tok.IDENT, prev.text + t.text, prev.line, prev.col, prev.offset)
        else:
            out.append(t)
    return out
