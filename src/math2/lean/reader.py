"""The one statement reader: a Lean item's header, context and target, the `:=` that ends the
target's statement, and the constants the statement names.

Read with the lexer, the command splitter and `math2.lean.brackets`, never by hand: comments
and strings are not code, a `:=` inside `let x := 1; …`, `have`, `(show P from h)` or a comment
does not end the statement, names are Lean's (ℕ, ε, 𝓝, `foo'`, `«two plus two»`). Used by
hygiene's callers and outside `math2.lean` by the datasets (`statement_only`), align
(`statement_names`), the checks (`checks.statement`) and eval.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from math2.lean.binders import Binder, binder_groups
from math2.lean.brackets import depths, proof_start
from math2.lean.commands import Command, split_code, split_commands
from math2.lean.lexer import LexError, Tok, Token, tokenize
from math2.lean.names import KEYWORDS, canonical, parts, same
from math2.lean.syntax import Scope, constants_of, identifiers
from math2.lean.targets import _declared_names, declaration_name

THEOREM_WORDS = frozenset({"theorem", "lemma", "example"})
DECLARATION_WORDS = THEOREM_WORDS | frozenset(
    {"def", "abbrev", "instance", "structure", "class", "inductive", "axiom", "opaque"}
)


class NoStatement(ValueError):
    """The code holds no declaration to read, or cannot be lexed."""


@dataclass
class LeanStatement:
    """A target declaration and what surrounds it."""

    header: str  # the exact import lines
    context: str  # the body before the target (a doc comment of the target included)
    target: str  # the target's text from its first `… in` prefix or word, proof included
    keyword: str  # theorem, lemma, example, def, …
    name: str | None  # full name as Lean prints it (None: an example or anonymous instance)
    signature: str  # the target's text before the `:=` of its proof (all of it when none)
    proof: str | None  # the text after that `:=` (None: no `:=`)
    binders: list[Binder] = field(default_factory=list)
    conclusion: list[Token] = field(default_factory=list)  # the type after the binders' `:`
    command: Command | None = None

    def constants(self, scope: Scope | None = None) -> list[str]:
        """The constants the statement (its signature) names (`syntax.constants_of`)."""
        return constants_of(self.signature, scope or Scope.of(self.name or ""))


def _tokens(body: str) -> list[Token]:
    try:
        return [t for t in tokenize(body) if t.kind is not Tok.DOC]
    except LexError as exc:
        raise NoStatement(f"cannot read the code: {exc}") from exc


def read_statement(code: str, name: str | None = None) -> LeanStatement:
    """The target of `code`: the declaration named `name` (its full name or the name as
    written, however spelled; a short spelling only when one declaration has it), else the last
    `theorem`/`lemma`/`example`, else the last declaration. NoStatement when there is none."""
    sc = split_code(code)
    body = sc.body
    commands = split_commands(_tokens(body))
    full_names = _declared_names(commands)
    decls = [i for i, c in enumerate(commands) if c.keyword in DECLARATION_WORDS]
    if not decls:
        raise NoStatement("no declaration")
    pick = None
    if name:
        named = [
            i
            for i in decls
            if (t := declaration_name(commands[i])) is not None
            and (same(name, full_names.get(i)) or same(name, t.text))
        ]
        if not named:  # a short spelling (`foo` for `Nat.foo`): only when one declaration has it
            short = parts(canonical(name))[-1]
            named = [
                i
                for i in decls
                if (t := declaration_name(commands[i])) is not None and parts(t.text)[-1] == short
            ]
            named = named if len(named) == 1 else []
        pick = named[-1] if named else None
    if pick is None:
        theorems = [i for i in decls if commands[i].keyword in THEOREM_WORDS]
        pick = (theorems or decls)[-1]
    c = commands[pick]
    first = c.prefixes[0] if c.prefixes else c
    start = first.tokens[0].offset
    last = c.tokens[-1]
    end = last.offset + len(last.text)
    decl = declaration_name(c)
    rest = c.body[c.body.index(decl) + 1 :] if decl is not None else c.body
    stop = proof_start(rest)
    if stop is not None:
        # up to the signature's last token: a comment before the `:=` is not kept, so that
        # whatever follows the signature (`:= by sorry`) is never inside a line comment
        last_sig = rest[stop - 1] if stop else (decl or c.tokens[c.keyword_index])
        signature = body[start : last_sig.offset + len(last_sig.text)]
        proof: str | None = body[rest[stop].offset + 2 : end].strip()
        sig_toks = rest[:stop]
    else:
        signature, proof, sig_toks = body[start:end], None, rest
    level = depths(sig_toks)
    colon = next((k for k, t in enumerate(sig_toks) if t.text == ":" and level[k] == 0), None)
    return LeanStatement(
        header=sc.header,
        context=body[:start],
        target=body[start:end],
        keyword=c.keyword,
        name=full_names.get(pick),
        signature=signature,
        proof=proof,
        binders=binder_groups(sig_toks),
        conclusion=sig_toks[colon + 1 :] if colon is not None else [],
        command=c,
    )


def statement_only(code: str) -> str:
    """The code with its target's proof replaced by `sorry` (`… := by\\n  sorry`): everything
    up to the `:=` that ends the statement, kept as written. Code that holds no declaration or
    cannot be lexed is returned stripped, with nothing cut."""
    text = code.strip()
    try:
        st = read_statement(text)
    except NoStatement:
        return text
    head = text[: len(text) - len(split_code(text).body)]
    return (head + st.context + st.signature).strip() + " := by\n  sorry"


def statement_names(statement: str | None, *, exclude: str | None = None) -> list[str]:
    """The names a statement mentions, as Lean reads them (comments and strings skipped,
    Unicode names such as ℝ, ε, 𝓝 included), in order, each once; `exclude` (the declaration's
    own name) left out. Which are constants is the caller's to decide (against the store)."""
    return [n for n in identifiers(statement or "") if n != exclude and n not in KEYWORDS]
