"""The term rules of statement hygiene, applied to every token of context and target: no meta
code, no IO or elaborator internals however spelled, no `sorry` but the proof, no command word
hidden inside another command, and the `{…}` of strings read as code. Also the `Violation`
record every rule returns."""

from __future__ import annotations

from pydantic import BaseModel

from math2.lean.commands import DECL_KEYWORDS, MODIFIERS, OTHER_COMMANDS, Command
from math2.lean.lexer import LexError, Tok, Token, interpolated_parts, tokenize
from math2.lean.rules import (
    ALLOWED_OPTION,
    CODE_WORDS,
    COMPILED_WORDS,
    CONTINUATION_WORDS,
    FORBIDDEN_ROOTS,
    OPTION_CEILINGS,
    OTHER_FORBIDDEN_COMMANDS,
    SORRY_WORDS,
    normalise_name,
)


class Violation(BaseModel):
    """One reason an item is refused, with its place (1-based line, 0-based column)."""

    rule: str
    line: int | None
    detail: str
    column: int | None = None

    def where(self) -> str:
        """`line L, column C` (or less)."""
        if self.line is None:
            return ""
        return f"line {self.line}" + (f", column {self.column}" if self.column is not None else "")


def _v(rule: str, t: Token | None, detail: str, offset: int) -> Violation:
    if t is None:
        return Violation(rule=rule, line=None, detail=detail)
    return Violation(rule=rule, line=t.line + offset, column=t.col, detail=detail)


def term_rules(
    toks: list[Token], offset: int, allow_sorry: set[int], *, allow_compiled: bool = False
) -> list[Violation]:
    out = []
    for i, t in enumerate(toks):
        if t.kind is Tok.KEYWORD:
            out.append(_v("command", t, f"`{t.text}` commands are not allowed", offset))
        elif t.kind is Tok.IDENT:
            name = normalise_name(t.text)
            if t.text in _OTHER_COMMANDS:
                out.append(
                    _v("command", t, f"`{t.text}` is not part of the statement grammar", offset)
                )
            elif t.text == "set_option":  # in a term or tactic block too
                opt = toks[i + 1].text if i + 1 < len(toks) else ""
                val = toks[i + 2].text if i + 2 < len(toks) else ""
                if (why := option_refusal(opt, val)) is not None:
                    out.append(_v("set_option", t, why, offset))
            elif t.text == "eval" and _adjacent(toks, i, "%"):
                out.append(_v("code", t, "`eval%` evaluates code while elaborating", offset))
            elif name in CODE_WORDS or t.text in CODE_WORDS:
                out.append(_v("code", t, f"`{t.text}` {CODE_WORDS.get(name, 'runs code')}", offset))
            elif not allow_compiled and (name in COMPILED_WORDS or t.text in COMPILED_WORDS):
                why = COMPILED_WORDS.get(name, COMPILED_WORDS.get(t.text, "trusts compiled code"))
                out.append(_v("compiled", t, f"`{t.text}` {why}", offset))
            elif name in SORRY_WORDS:
                if i not in allow_sorry:
                    out.append(_v("sorry", t, f"`{t.text}` outside the proof", offset))
            elif FORBIDDEN_ROOTS.match(name):
                out.append(
                    _v("io", t, f"`{t.text}` reaches IO or Lean's internals ({name})", offset)
                )
        elif t.kind is Tok.STRING and not t.text.startswith("r"):
            out.extend(_interpolations(t, offset))
    return out


_OTHER_COMMANDS = frozenset(OTHER_FORBIDDEN_COMMANDS)


def _adjacent(toks: list[Token], i: int, text: str) -> bool:
    """Whether the token after i is `text` and touches it (`eval%`)."""
    if i + 1 >= len(toks):
        return False
    t, u = toks[i], toks[i + 1]
    return u.text == text and u.offset == t.offset + len(t.text)


def over_ceiling(opt: str, val: str) -> int | None:
    """The ceiling a resource option's value goes over (0 is no limit at all), or None."""
    ceiling = OPTION_CEILINGS.get(opt)
    try:
        n = int(val.replace("_", ""))
    except ValueError:
        return None
    return ceiling if ceiling is not None and (n == 0 or n > ceiling) else None


def option_refusal(opt: str, val: str) -> str | None:
    """Why `set_option opt val` is refused, or None."""
    if not ALLOWED_OPTION.match(opt):
        return f"option `{opt}` is not allowed"
    if opt in ("autoImplicit", "relaxedAutoImplicit") and val != "false":
        return f"`{opt}` must stay false"
    ceiling = OPTION_CEILINGS.get(opt)
    if ceiling is not None:
        try:
            n = int(val.replace("_", ""))
        except ValueError:
            return f"`{opt}` needs a number (at most {ceiling:,})"
        if n == 0:
            return f"`{opt} 0` removes the limit; at most {ceiling:,} is allowed"
        if n > ceiling:
            return f"`{opt} {val}` is above the limit of {ceiling:,}"
    return None


_COMMAND_WORDS = DECL_KEYWORDS | OTHER_COMMANDS | MODIFIERS


def line_start_rules(commands: list[Command], offset: int) -> list[Violation]:
    """Lean's layout: a line at column 0 continues the command before it (a theorem's type may
    go on at column 0) unless it starts with a command word, which Lean would read as a command
    of its own; such a word inside another command is refused."""
    out = []
    for c in commands:
        for t in c.tokens[1:]:
            if (
                t.col == 0
                and t.kind is Tok.IDENT
                and t.text in _COMMAND_WORDS
                and t.text not in CONTINUATION_WORDS
                and t is not c.tokens[c.keyword_index]
            ):
                detail = f"`{t.text}` at the start of a line does not begin an allowed command"
                out.append(_v("command", t, detail, offset))
    return out


def _interpolations(t: Token, offset: int) -> list[Violation]:
    """`{…}` inside a string may be code (s!, m!, f! strings): lex it and apply the term rules."""
    out = []
    for part in interpolated_parts(t.text):
        try:
            inner = tokenize(part)
        except LexError:
            continue
        for v in term_rules(inner, 0, set()):
            out.append(v.model_copy(update={"line": t.line + offset, "column": t.col}))
    return out
