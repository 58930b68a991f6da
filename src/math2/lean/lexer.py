"""The one Lean 4 lexer: enough to see commands, names and brackets, never fooled by comments
and strings. `tokenize` gives every token (hygiene, the command splitter, targets, the lints);
its scanners for comments (`comment_end`), strings (`string_end`, `interpolation_spans`) and
names (`is_id_start`, `is_id_rest`) also make `math2.lean.syntax.mask`, the code view the
source scanner and `to_additive` read (tests/lean/test_syntax.py: the same lexing)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Tok(StrEnum):
    """Token kinds."""

    IDENT = "ident"
    KEYWORD = "keyword"  # #eval, #print, … (hash commands)
    SYMBOL = "symbol"
    STRING = "string"
    CHAR = "char"
    NUMBER = "number"
    DOC = "doc"  # /-- … -/ and /-! … -/


@dataclass(frozen=True, slots=True)
class Token:
    """One token with its 1-based line and 0-based column."""

    kind: Tok
    text: str
    line: int
    col: int
    offset: int


class LexError(ValueError):
    """Unterminated comment or string; `line` is where it starts."""

    def __init__(self, message: str, line: int, column: int | None = None):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.column = column
        self.reason = message


# Lean's identifier rules: letters (but not λ Π Σ), Greek, letter-like symbols, subscripts,
# digits after the first character, and _ ' ! ? after the first character.
def is_id_start(ch: str) -> bool:
    if ch == "_" or (ch.isalpha() and ch not in "λΠΣ"):
        return True
    o = ord(ch)
    return 0x2100 <= o <= 0x214F or 0x1D49C <= o <= 0x1D59F  # letter-like, script letters


def is_id_rest(ch: str) -> bool:
    if is_id_start(ch) or "0" <= ch <= "9" or ch in "'!?":
        return True
    o = ord(ch)
    return 0x2080 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A or o == 0x2071  # subscripts


_BLANKS = re.compile(r"[ \t]+")
_ASCII_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*")
_ASCII_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NUMBER = re.compile(
    r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*(\.[0-9]+)?([eE][+-]?[0-9]+)?"
)
CHAR = re.compile(r"'(\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)|[^'\\\n])'")
_SYMBOLS = sorted(
    [
        ":=",
        "=>",
        "<;>",
        "..",
        "...",
        "←",
        "→",
        "↔",
        "⟨",
        "⟩",
        "@[",
        "::",
        "|>.",
        "|>",
        "<|",
        "≠",
        "≤",
        "≥",
        "<=",
        ">=",
        "==",
    ],
    key=len,
    reverse=True,
)
_SYMBOL_RE = re.compile("|".join(re.escape(s) for s in _SYMBOLS))


# The characters a string literal may start with (`"…"`, `r"…"`, `s!"…"`, `m!"…"`, `f!"…"`).
_STRING_START = frozenset('"rsmf')


def tokenize(text: str) -> list[Token]:
    """Tokens of Lean source, comments dropped (doc comments kept as DOC tokens)."""
    toks: list[Token] = []
    i, n, line, line_start = 0, len(text), 1, 0

    def tok(kind: Tok, start: int, end: int, sline: int, scol: int) -> None:
        toks.append(Token(kind, text[start:end], sline, scol, start))

    col = 0
    try:
        while i < n:
            ch = text[i]
            if ch == "\n":
                line += 1
                line_start = i + 1
                i += 1
                continue
            if ch == " " or ch == "\t":
                i = _BLANKS.match(text, i).end()  # type: ignore[union-attr]
                continue
            if ch.isspace():
                i += 1
                continue
            col = i - line_start
            if ch == "-" and text.startswith("--", i):
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if ch == "/" and text.startswith("/-", i):
                j = comment_end(text, i)
                if j < 0:
                    raise LexError("unterminated comment", line)
                if text.startswith(("/--", "/-!"), i):
                    tok(Tok.DOC, i, j, line, col)
                line, line_start = _advance(text, i, j, line, line_start)
                i = j
                continue
            if ch not in _STRING_START:
                pass  # no string starts here (the two tests below are the lexer's slowest)
            elif _interpolated_at(text, i, toks):
                q = i + 2 if text[i] == "s" else i
                spans = interpolation_spans(text, i, q, line)
                for kind, a, b in spans:
                    sline = line + text.count("\n", i, a)
                    scol = a - (text.rfind("\n", 0, a) + 1)
                    if kind is Tok.STRING:
                        toks.append(Token(Tok.STRING, text[a:b], sline, scol, a))
                        continue
                    inner = tokenize(text[a:b])
                    if any(bracket_balance(inner)):
                        raise LexError("unbalanced brackets in a string interpolation", sline)
                    for t in inner:
                        col2 = t.col + scol if t.line == 1 else t.col
                        toks.append(Token(t.kind, t.text, sline + t.line - 1, col2, a + t.offset))
                end = spans[-1][2]
                line, line_start = _advance(text, i, end, line, line_start)
                i = end
                continue
            closing = string_end(text, i, line) if ch in _STRING_START else None
            if closing is not None:
                tok(Tok.STRING, i, closing, line, col)
                line, line_start = _advance(text, i, closing, line, line_start)
                i = closing
                continue
            if ch == "'" and (m := CHAR.match(text, i)):
                tok(Tok.CHAR, i, m.end(), line, col)
                i = m.end()
                continue
            if ch in _ASCII_START and (m := _ASCII_ID.match(text, i)):
                j = m.end()
                nxt = text[j] if j < n else ""
                if nxt != "." and nxt != "«" and (nxt < "\x80" or not is_id_rest(nxt)):
                    tok(Tok.IDENT, i, j, line, col)  # a plain ASCII name: no dots, no «»
                    i = j
                    continue
            if ch == "«" or is_id_start(ch):
                j = _ident(text, i, line)
                tok(Tok.IDENT, i, j, line, col)
                i = j
                continue
            if ch == "#" and i + 1 < n and text[i + 1].isalpha():
                j = i + 1
                while j < n and (text[j].isalnum() or text[j] == "_"):
                    j += 1
                tok(Tok.KEYWORD, i, j, line, col)
                i = j
                continue
            if "0" <= ch <= "9":
                m = NUMBER.match(text, i)
                assert m is not None  # any ASCII digit starts a number
                tok(Tok.NUMBER, i, m.end(), line, col)
                i = m.end()
                continue
            m = _SYMBOL_RE.match(text, i)
            end = m.end() if m else i + 1
            tok(Tok.SYMBOL, i, end, line, col)
            i = end
    except LexError as exc:
        if exc.column is None:
            exc.column = col  # where the unclosed comment, string or name begins
        raise
    return toks


def _advance(text: str, i: int, end: int, line: int, line_start: int) -> tuple[int, int]:
    """(line, start of that line) after text[i:end]."""
    nl = text.count("\n", i, end)
    return (line + nl, text.rfind("\n", i, end) + 1) if nl else (line, line_start)


_OPENERS = "([{⟨⦃"
_CLOSERS = ")]}⟩⦄"


def bracket_balance(toks: list[Token]) -> list[int]:
    """How many of each bracket kind stay open at the end (all zero when balanced; a close
    before its open counts as -1 and stays)."""
    count = [0] * len(_OPENERS)
    for t in toks:
        if t.kind is not Tok.SYMBOL:
            continue
        if t.text in _OPENERS:
            count[_OPENERS.index(t.text)] += 1
        elif t.text in _CLOSERS:
            k = _CLOSERS.index(t.text)
            count[k] = count[k] - 1 if count[k] > 0 else -(10**6)
    return count


def _interpolated_at(text: str, i: int, toks: list[Token]) -> bool:
    """Whether an interpolated string starts at i: `s!"…"`, or `"…"` right after a name ending
    in `!` (`m!`, `f!`, …). Its `{…}` parts are code and are lexed as code."""
    if text.startswith('s!"', i) and not (toks and toks[-1].offset + len(toks[-1].text) == i):
        return True
    if text[i] != '"' or not toks:
        return False
    prev = toks[-1]
    return prev.kind is Tok.IDENT and prev.text.endswith("!") and prev.offset + len(prev.text) == i


def interpolation_spans(text: str, start: int, q: int, line: int) -> list[tuple[Tok, int, int]]:
    """The string pieces and code pieces of an interpolated string whose quote is at q."""
    n = len(text)
    spans: list[tuple[Tok, int, int]] = []
    piece, j = start, q + 1
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            spans.append((Tok.STRING, piece, j + 1))
            return spans
        elif c == "{":
            spans.append((Tok.STRING, piece, j + 1))
            k = brace_end(text, j + 1, line)
            if k < 0:
                raise LexError("unterminated string interpolation", line)
            spans.append((Tok.IDENT, j + 1, k - 1))  # code
            piece, j = k - 1, k
        else:
            j += 1
    raise LexError("unterminated string", line)


def string_end(text: str, i: int, line: int) -> int | None:
    """End offset of a string literal ("…", s!"…", r"…", r#"…"#) at i, or None if none starts."""
    n = len(text)
    if text.startswith("r", i):
        j = i + 1
        while j < n and text[j] == "#":
            j += 1
        if j >= n or text[j] != '"':
            return None
        close = '"' + "#" * (j - i - 1)
        k = text.find(close, j + 1)
        if k < 0:
            raise LexError("unterminated string", line)
        return k + len(close)
    if text.startswith(('s!"', 'm!"', 'f!"'), i):
        return _quoted_end(text, i + 3, line, interpolated=True)
    if text[i] == '"':
        return _quoted_end(text, i + 1, line, interpolated=False)
    return None


def _quoted_end(text: str, j: int, line: int, interpolated: bool) -> int:
    """End of a string whose text starts at j (after its quote); in an interpolated one, `{…}`
    parts are code, and may hold strings of their own."""
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            return j + 1
        elif c == "{" and interpolated:
            k = brace_end(text, j + 1, line)
            j = n if k < 0 else k
        else:
            j += 1
    raise LexError("unterminated string", line)


def brace_end(text: str, j: int, line: int = 1) -> int:
    """The offset after the `}` that closes a `{` just before j, strings inside skipped (-1 if
    none closes it)."""
    n, depth = len(text), 1
    while j < n:
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if not depth:
                return j + 1
        elif c == '"' or text.startswith(('s!"', 'm!"', 'f!"'), j):
            end = string_end(text, j, line)
            j = end if end is not None else j + 1
            continue
        j += 1
    return -1


def interpolated_parts(token_text: str) -> list[str]:
    """The code inside `{…}` of a string literal (for the rules: it may run code)."""
    parts: list[str] = []
    i = token_text.find('"') + 1
    n = len(token_text)
    while i < n:
        c = token_text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            try:
                j = brace_end(token_text, i + 1)
            except LexError:  # a string inside that does not end: take the rest as code
                j = -1
            j = n if j < 0 else j
            parts.append(token_text[i + 1 : j - 1])
            i = j
            continue
        i += 1
    return parts


def comment_end(text: str, i: int) -> int:
    """The offset after the `-/` that closes the (nestable) comment opening at i; -1 if none."""
    depth, k, find = 1, i + 2, text.find
    while depth:
        a, b = find("/-", k), find("-/", k)
        if b < 0:
            return -1
        if 0 <= a < b:
            depth, k = depth + 1, a + 2
        else:
            depth, k = depth - 1, b + 2
    return k


def _ident(text: str, i: int, line: int) -> int:
    """End offset of a (possibly dotted, possibly «quoted») identifier starting at i."""
    n = len(text)
    j = i
    while True:
        if j < n and text[j] == "«":
            k = text.find("»", j + 1)
            if k < 0:
                raise LexError("unterminated «name»", line)
            j = k + 1
        elif j < n and is_id_start(text[j]):
            j += 1
            while j < n and is_id_rest(text[j]):
                j += 1
        else:
            break
        if j + 1 < n and text[j] == "." and (text[j + 1] == "«" or is_id_start(text[j + 1])):
            j += 1
            continue
        break
    return j
