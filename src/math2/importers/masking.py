"""The code view of a source file of another system: its comments blanked out (newlines kept,
so offsets and line numbers stay those of the file), its strings and quotations left as they
are but never mistaken for a comment's start or end.

One masker per comment syntax: the ML family (`(* … *)`, nested: OCaml for HOL Light, Standard
ML for HOL4, Rocq's vernacular), Lisp (`;` to the end of the line and `#| … |#`, nested: ACL2),
and the line comments of PVS and TeX (`%`). Comments are never text of the corpus (K6.6): the
importers read names and statements from this view only. An unterminated comment or string is
an `InputError` naming the file and the line where it opened.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from math2.errors import InputError

# ML family: what can open or close something, found by one regex instead of a loop per char.
_ML_EVENTS = re.compile(r"\(\*|\*\)|\"|``|`|'|“|‘")
_CLOSING = {"`": "`", "``": "``", "“": "”", "‘": "’"}
_ML_STRING_BACKSLASH = re.compile(r'\\.|"', re.S)
_ML_STRING_DOUBLED = re.compile(r'""|"')  # Rocq: "" is a quote inside a string
_OCAML_CHAR = re.compile(r"'(?:[^\\'\n]|\\(?:[\\'\"ntbr ]|\d{3}|x[0-9a-fA-F]{2}))'")
_IDENT_CHAR = re.compile(r"[\w']")
_LISP_EVENTS = re.compile(r';|#\||\|#|"|#\\|\|')
_LISP_STRING = re.compile(r'\\.|"', re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")
_BLOCK = re.compile(r"#\||\|#")


@dataclass(frozen=True)
class Masked:
    """A file's code view (comments blanked), its structure view (strings and quotations
    blanked as well, for finding commands and brackets) and its line starts."""

    path: str
    code: str
    structure: str
    line_starts: list[int]

    def line(self, offset: int) -> int:
        """The 1-based line of an offset."""
        return bisect.bisect_right(self.line_starts, offset)


def read_source(path: Path) -> tuple[str, bool]:
    """A file's text, and whether it was valid UTF-8 (other bytes are read as U+FFFD: the
    importers only read names and statements, and count the files that needed it)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), False


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each (start, end) span (in order) replaced by spaces, newlines kept."""
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _masked(
    path: str | Path,
    text: str,
    comments: list[tuple[int, int]],
    literals: list[tuple[int, int]],
) -> Masked:
    """The views of `text` with its comment spans and its literal (string, quotation) spans."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    code = _blank(text, comments)
    structure = _blank(code, literals) if literals else code
    return Masked(str(path), code, structure, starts)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def mask_ml(
    path: str | Path,
    text: str,
    *,
    quotations: bool = False,
    doubled_quote_strings: bool = False,
    char_literals: bool = False,
    sml: bool = False,
) -> Masked:
    """Blank `(* … *)` comments (nested). `quotations`: backquoted terms (`` `…` `` and
    ```` ``…`` ````, HOL; with `sml`, HOL4's `“…”` and `‘…’` too) are opaque;
    `doubled_quote_strings`: `""` escapes a quote (Rocq) instead of a backslash (OCaml, SML);
    `char_literals`: OCaml's `'"'` is a character; `sml`: Standard ML, whose comments hold no
    strings (OCaml and Rocq lex strings inside comments)."""
    comments: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] = []
    string_end = _ML_STRING_DOUBLED if doubled_quote_strings else _ML_STRING_BACKSLASH
    depth = 0
    opened = 0
    i = 0
    n = len(text)
    while i < n:
        m = _ML_EVENTS.search(text, i)
        if m is None:
            break
        tok, at = m.group(0), m.start()
        if depth:  # inside a comment: only nesting and strings matter (ML lexes them there)
            if tok == "(*":
                depth += 1
            elif tok == "*)":
                depth -= 1
                if depth == 0:
                    comments.append((opened, m.end()))
            elif tok == '"' and not sml:
                i = _string_end(path, text, m.end(), string_end, at)
                continue
            elif tok == "'" and char_literals and (lit := _OCAML_CHAR.match(text, at)):
                i = lit.end()  # OCaml lexes '"' inside a comment too
                continue
            i = m.end()
            continue
        if tok == "(*":
            depth, opened = 1, at
            i = m.end()
        elif tok == '"':
            i = _string_end(path, text, m.end(), string_end, at)
            literals.append((at + 1, i - 1))
        elif tok in _CLOSING and quotations and (sml or tok in ("`", "``")):
            close = text.find(_CLOSING[tok], m.end())
            if close < 0:
                raise InputError(path, _line(text, at), f"quotation {tok} is never closed")
            literals.append((m.end(), close))
            i = close + len(_CLOSING[tok])
        elif tok == "'" and char_literals:
            lit = _OCAML_CHAR.match(text, at)
            prev_ident = at > 0 and _IDENT_CHAR.match(text[at - 1]) is not None
            i = lit.end() if lit and not prev_ident else m.end()
        else:
            i = m.end()
    if depth:
        raise InputError(path, _line(text, opened), "comment (* opened here is never closed")
    return _masked(path, text, comments, literals)


def _string_end(path: str | Path, text: str, start: int, end_re: re.Pattern[str], at: int) -> int:
    """The offset after the string that opened at `at` (its body starts at `start`)."""
    i = start
    while True:
        m = end_re.search(text, i)
        if m is None:
            raise InputError(path, _line(text, at), "string opened here is never closed")
        if m.group(0) == '"':
            return m.end()
        i = m.end()  # an escape (\x or "")


def mask_lisp(path: str | Path, text: str) -> Masked:
    """Blank `;` line comments and `#| … |#` block comments (nested); strings, `#\\c`
    characters and `|…|` symbols are literals."""
    comments: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] = []
    i = 0
    n = len(text)
    while i < n:
        m = _LISP_EVENTS.search(text, i)
        if m is None:
            break
        tok, at = m.group(0), m.start()
        if tok == ";":
            end = text.find("\n", at)
            end = n if end < 0 else end
            comments.append((at, end))
            i = end
        elif tok == "#|":
            depth, j = 1, m.end()
            while depth:
                nxt = _BLOCK.search(text, j)
                if nxt is None:
                    raise InputError(
                        path, _line(text, at), "comment #| opened here is never closed"
                    )
                depth += 1 if nxt.group(0) == "#|" else -1
                j = nxt.end()
            comments.append((at, j))
            i = j
        elif tok == '"':
            i = _string_end(path, text, m.end(), _LISP_STRING, at)
            literals.append((at + 1, i - 1))
        elif tok == "#\\":
            literals.append((m.end(), min(m.end() + 1, n)))  # the character, whatever it is
            i = m.end() + 1
        elif tok == "|":
            close = text.find("|", m.end())
            if close < 0:
                raise InputError(path, _line(text, at), "symbol |… opened here is never closed")
            literals.append((m.end(), close))
            i = close + 1
        else:  # a stray |# outside a comment
            i = m.end()
    return _masked(path, text, comments, literals)


_HASH_COMMENT = re.compile(r"#[^\n]*")
_PERCENT_PVS = re.compile(r'%|"')
_PERCENT_TEX = re.compile(r"\\\\|\\%|%")


def mask_percent(path: str | Path, text: str, *, tex: bool = False) -> Masked:
    """Blank `%` line comments: PVS (strings `"…"` are literals) or TeX (`\\%` is a
    percent sign)."""
    comments: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] = []
    events = _PERCENT_TEX if tex else _PERCENT_PVS
    i = 0
    n = len(text)
    while i < n:
        m = events.search(text, i)
        if m is None:
            break
        if m.group(0) == "%":
            end = text.find("\n", m.start())
            end = n if end < 0 else end
            comments.append((m.start(), end))
            i = end
        elif m.group(0) == '"':
            i = _string_end(path, text, m.end(), _LISP_STRING, m.start())
            literals.append((m.start() + 1, i - 1))
        else:
            i = m.end()
    return _masked(path, text, comments, literals)


def mask_hash(path: str | Path, text: str) -> Masked:
    """Blank `#` line comments (Naproche's FTL files)."""
    comments = [(m.start(), m.end()) for m in _HASH_COMMENT.finditer(text)]
    return _masked(path, text, comments, [])


def balanced(code: str, start: int, open_: str = "(", close: str = ")") -> int:
    """The offset after the bracket group that opens at `start` (or len(code))."""
    depth = 0
    for i in range(start, len(code)):
        c = code[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)
