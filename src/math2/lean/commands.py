"""Splitting Lean code into a trusted header, then commands, over the lexer's tokens.

The header is the leading run of lines that are *exactly* `import A.B.C` (blank lines and `--`
comments may sit between them); the first line that is anything else starts the body, which is
kept verbatim. The body is split into commands at the tokens that can only begin a command (at
bracket depth 0), with a command's head — doc comment, `@[…]` attributes, modifiers — kept with
it, and `open … in` / `set_option … in` / `omit … in` / `include … in` kept as prefixes of the
command they govern.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from math2.lean.brackets import CLOSE, OPEN, matching
from math2.lean.lexer import Tok, Token
from math2.lean.names import canonical
from math2.lean.names import parts as name_parts
from math2.lean.rules import OTHER_FORBIDDEN_COMMANDS

_IMPORT_LINE = re.compile(
    r"^import[ \t]+([A-Za-z_][A-Za-z0-9_']*(?:\.[A-Za-z_][A-Za-z0-9_']*)*)[ \t]*$"
)

# Tokens that begin a command (after an optional head).
DECL_KEYWORDS = {
    "theorem", "lemma", "def", "abbrev", "example", "structure", "class", "inductive",
    "coinductive", "instance", "axiom", "opaque", "constant", "mutual", "alias", "export",
}  # fmt: skip
OTHER_COMMANDS = {
    "open", "namespace", "section", "end", "variable", "variables", "universe", "universes",
    "set_option", "attribute", "omit", "include", "import", "notation", "infix", "infixl",
    "infixr", "prefix", "postfix", "macro", "macro_rules", "elab", "elab_rules", "syntax",
    "declare_syntax_cat", "run_cmd", "run_tac", "run_elab", "run_meta", "initialize",
    "builtin_initialize", "deriving", "add_decl_doc", "register_option", "declare_config_elab",
    "unif_hint", "suppress_compilation", "unseal", "seal", "irreducible_def", "assert_not_exists",
} | set(OTHER_FORBIDDEN_COMMANDS)  # fmt: skip
MODIFIERS = {"private", "protected", "noncomputable", "unsafe", "partial", "local", "scoped",
             "nonrec", "public", "meta"}  # fmt: skip
PREFIX_COMMANDS = {"open", "set_option", "omit", "include"}  # may end in `in`
# Every word `_starts_command` may answer yes for (a quick no for any other identifier).
_COMMAND_WORDS = frozenset(DECL_KEYWORDS | OTHER_COMMANDS | MODIFIERS | {"deriving", "instance"})


@dataclass
class HeaderLine:
    """One trusted import line."""

    line: int
    module: str


@dataclass
class SplitCode:
    """Code split into its import header and the body (verbatim), with the body's first line."""

    imports: list[HeaderLine]
    body: str
    body_line: int  # 1-based line of the body's first line in the original code

    @property
    def header(self) -> str:
        """The header as Lean text."""
        return "\n".join(f"import {h.module}" for h in self.imports)


def split_code(code: str) -> SplitCode:
    """The exact import lines at the top, and everything after them, untouched."""
    lines = code.split("\n")
    imports: list[HeaderLine] = []
    start = len(lines)
    for idx, raw in enumerate(lines):
        s = raw.strip()
        m = _IMPORT_LINE.match(s)
        if m:
            imports.append(HeaderLine(idx + 1, m.group(1)))
        elif s and not (s.startswith("--") and not s.startswith("--/")):
            start = idx
            break
    return SplitCode(imports, "\n".join(lines[start:]), start + 1)


@dataclass
class Command:
    """A command: its head (doc, attributes, modifiers), keyword, tokens, and `… in` prefixes."""

    tokens: list[Token]
    keyword: str  # the command keyword (`theorem`, `open`, `#eval`, …) or "?" when there is none
    keyword_index: int  # index of the keyword in `tokens`
    modifiers: list[str] = field(default_factory=list)
    attributes: list[list[Token]] = field(default_factory=list)  # each @[…] list's inner tokens
    doc: Token | None = None
    prefixes: list[Command] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.tokens[0].line

    @property
    def col(self) -> int:
        return self.tokens[0].col

    @property
    def body(self) -> list[Token]:
        """The tokens after the keyword."""
        return self.tokens[self.keyword_index + 1 :]

    @property
    def is_prefix(self) -> bool:
        """`open … in`, `set_option … in`, `omit … in`, `include … in`."""
        return (
            self.keyword in PREFIX_COMMANDS
            and len(self.tokens) > 1
            and self.tokens[-1].text == "in"
        )


def _starts_command(toks: list[Token], i: int) -> bool:
    """Whether token i begins a command (its head or its keyword)."""
    t = toks[i]
    if t.kind is Tok.KEYWORD or t.kind is Tok.DOC:
        return True
    if t.kind is Tok.SYMBOL:
        return t.text == "@["
    if t.kind is not Tok.IDENT or t.text not in _COMMAND_WORDS:
        return False
    if t.text == "deriving":  # `deriving instance …` is a command; `deriving X` ends a structure
        return i + 1 < len(toks) and toks[i + 1].text == "instance"
    if t.text == "instance":  # `local instance`, `scoped instance`: the modifier began it
        return not (i > 0 and toks[i - 1].text in MODIFIERS)
    if t.text == "inductive" and i > 0 and toks[i - 1].text == "class":
        return False
    if t.text in ("scoped", "local") and i > 0 and toks[i - 1].text == "open":
        return False
    return t.text in DECL_KEYWORDS or t.text in OTHER_COMMANDS or t.text in MODIFIERS


def _continues_head(t: Token, in_head: bool) -> bool:
    """Whether a command's head (doc, attributes, modifiers) is still open after `t`."""
    if t.kind is Tok.DOC or (t.kind is Tok.IDENT and t.text in MODIFIERS):
        return True
    return t.kind is Tok.SYMBOL and (t.text == "@[" or (t.text == "]" and in_head))


def split_commands(toks: list[Token]) -> list[Command]:
    """The commands of a token list (see the module's docstring)."""
    starts: list[int] = []
    depth = 0
    in_head = False  # inside a head (doc, attributes, modifiers) that has not met its keyword
    i = 0
    while i < len(toks):
        t = toks[i]
        if depth == 0 and not in_head and _starts_command(toks, i):
            starts.append(i)
        if t.text in OPEN:
            depth += 1
        elif t.text in CLOSE and depth:
            depth -= 1
        if depth == 0:
            in_head = _continues_head(t, in_head)
        elif t.kind is Tok.SYMBOL and t.text == "@[":
            in_head = True
        i += 1
    commands: list[Command] = []
    bounds = [*starts, len(toks)]
    if starts and starts[0] > 0:
        commands.append(_command(toks[: starts[0]]))
    elif not starts and toks:
        commands.append(_command(toks))
    for a, b in itertools.pairwise(bounds):
        if b > a:
            commands.append(_command(toks[a:b]))
    # Attach `… in` prefixes to the command they govern.
    out: list[Command] = []
    pending: list[Command] = []
    for c in commands:
        if c.is_prefix:
            pending.append(c)
            continue
        c.prefixes = pending
        pending = []
        out.append(c)
    out.extend(pending)  # a dangling prefix stays a command of its own (and will be refused)
    return out


def _command(toks: list[Token]) -> Command:
    doc = None
    attributes: list[list[Token]] = []
    modifiers: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind is Tok.DOC and doc is None and not modifiers:
            doc = t
            i += 1
        elif t.kind is Tok.SYMBOL and t.text == "@[":
            close = matching(toks, i)
            j = len(toks) + 1 if close is None else close + 1
            attributes.append(toks[i + 1 : j - 1])
            i = j
        elif t.kind is Tok.IDENT and t.text in MODIFIERS:
            modifiers.append(t.text)
            i += 1
        else:
            break
    if i < len(toks):
        kw = toks[i].text
        return Command(toks, kw, i, modifiers, attributes, doc)
    return Command(toks, "?", max(0, len(toks) - 1), modifiers, attributes, doc)


def scope_names(commands: list[Command]) -> list[list[str]]:
    """The components of the enclosing `namespace`s before each command (sections push
    nothing; `namespace A.B` pushes both, and one `end` closes them)."""
    out: list[list[str]] = []
    stack: list[tuple[str, ...]] = []
    for c in commands:
        out.append([p for ps in stack for p in ps])
        names = [t.text for t in c.body if t.kind is Tok.IDENT]
        if c.keyword == "namespace" and names:
            stack.append(tuple(p for p in name_parts(names[0]) if p != "_root_"))
        elif c.keyword == "section":
            stack.append(())
        elif c.keyword == "end" and stack:
            stack.pop()
    return out


def namespaces(commands: list[Command]) -> list[str]:
    """The namespaces a block's names may resolve in: those it opens (as a command or an
    `open … in` prefix) and those it enters with every enclosing one (`namespace A.B` inside
    `namespace C`: C.A.B, C.A, C)."""
    out: list[str] = []
    inside: list[str] = []
    for c in commands:
        for p in [*c.prefixes, c]:
            if p.keyword not in ("open", "namespace", "end"):
                continue
            words = [canonical(t.text) for t in p.body if t.kind is Tok.IDENT]
            if p.keyword == "open":
                out.extend(words)
            elif p.keyword == "namespace" and words:
                inside.append(words[0])
                full = ".".join(inside)
                parts = full.split(".")
                out.extend(".".join(parts[:k]) for k in range(len(parts), 0, -1))
            elif p.keyword == "end" and words and inside:
                inside.pop()
    return list(dict.fromkeys(out))
