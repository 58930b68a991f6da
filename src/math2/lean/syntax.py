"""Reading Lean text on top of the one lexer (`math2.lean.lexer`): the code view of a file, the
identifiers of a statement, which constants a statement uses, and an identifier's words.

Two views of the same lexing, one per need:

- `tokenize` (lexer.py): every token, for hygiene, the command splitter, targets and the lints.
- `mask` (here): the text with everything that is not code blanked out (comments, doc comments,
  strings and the string parts of interpolated strings, character literals), newlines kept, and
  the doc comments beside it. The source scanner reads all of a library this way: it finds
  comments and strings with the lexer's own scanners (`comment_end`, `string_end`, the
  interpolation spans) and skips over code with one regular expression, about twenty times
  faster than tokenizing. The code it leaves is exactly the text of the lexer's code tokens
  (identifiers, keywords, symbols, numbers), which tests/lean/test_syntax.py checks on the
  real REPL transcripts and on generated text.
- `identifiers` reads the identifiers of the code view with `IDENT`, the lexer's rule for a
  name as a regular expression; `constants_of` resolves them against a scope.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from math2.lean.lexer import (
    CHAR,
    NUMBER,
    LexError,
    Tok,
    comment_end,
    interpolation_spans,
    is_id_rest,
    is_id_start,
    string_end,
)

# The lexer's identifier rule (`is_id_start`, `is_id_rest`, `«…»` parts joined by dots) as a
# pattern. Excluded from a start: digits of any kind (subscripts and superscripts, number
# forms), λ Π Σ; letter-like symbols and script letters included.
_START = (
    r"(?:[^\W\d\u00b2\u00b3\u00b9\u00bc-\u00be\u2070\u2074-\u2079\u2080-\u2089\u2150-\u2183\u2460-\u24ff"
    r"\u2776-\u2793λΠΣ]|[\u2100-\u214f\U0001d49c-\U0001d59f])"
)
_REST = r"(?:" + _START + r"|[0-9'!?\u2080-\u209c\u1d62-\u1d6a\u2071])"
NAME_PART = re.compile(_START + _REST + r"*")  # one unquoted part of a name
_PART = r"(?:«[^»]*»|" + NAME_PART.pattern + r")"
IDENT = re.compile(_PART + r"(?:\." + _PART + r")*")
# What the lexer reads as something else than a name although a name could match inside it:
# numbers (`0x1F`, `2e5`) and hash commands (`#eval`).
_NOT_NAME = NUMBER.pattern + r"|#(?=[^\W\d_])\w+"
_NAME_OR_NOT = re.compile(r"(?P<other>" + _NOT_NAME + r")|(?P<name>" + IDENT.pattern + r")")

_SPECIAL = re.compile(r"--|/-|\"|'|«")
_BLANK = re.compile(r"[^\n]")
_WORD = re.compile(r"\w*")


@dataclass(frozen=True, slots=True)
class Masked:
    """A text's code view: `code` has the text's length, with comments, strings and character
    literals replaced by spaces (newlines kept); `docs` the doc comments (start, end, text)."""

    code: str
    docs: list[tuple[int, int, str]]


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _after_name(text: str, j: int, lo: int) -> bool:
    """Whether a name ends right before j (so a `'` at j continues it): the run of name
    characters before j (not before lo, where the code began), read as the lexer reads it
    (numbers first), ends inside a name."""
    k = j
    while k > lo and is_id_rest(text[k - 1]):
        k -= 1
    if k < j and k > lo and text[k - 1] == "#" and text[k].isalpha():
        k = _WORD.match(text, k).end()  # type: ignore[union-attr]  # a hash command: `#eval`
        if k > j:
            return True  # j is inside it
    while k < j:
        c = text[k]
        if is_id_start(c):
            return True
        k = NUMBER.match(text, k).end() if "0" <= c <= "9" else k + 1  # type: ignore[union-attr]
    return False


def _token_start(text: str, p: int, lo: int) -> bool:
    """Whether a token may start at p (it does not continue a name, a dotted name or a hash
    command)."""
    if p == lo:
        return True
    before = text[p - 1]
    hash_command = before == "#" and text[p].isalpha()
    dotted = before == "." and _after_name(text, p - 1, lo)
    return not (dotted or hash_command or _after_name(text, p, lo))


def _adjacent(text: str, p: int, docs: list[tuple[int, int, str]]) -> bool:
    """Whether a token ends right before p (no blank or comment between; a doc comment is a
    token)."""
    if p == 0 or text[p - 1].isspace():
        return False
    return not text.startswith("-/", p - 2) or bool(docs and docs[-1][1] == p)


def mask(text: str) -> Masked:
    """The code view of Lean text (see the module docstring). Unterminated comments, strings
    and «names» raise LexError with their line and column."""
    out: list[str] = []
    docs: list[tuple[int, int, str]] = []
    _mask_into(text, 0, len(text), out, docs)
    return Masked("".join(out), docs)


def _mask_into(
    text: str, i: int, stop: int, out: list[str], docs: list[tuple[int, int, str]]
) -> None:
    last = i
    search = _SPECIAL.search
    while True:
        m = search(text, i, stop)
        if m is None:
            break
        j = m.start()
        tok = m.group(0)
        start = j
        code_parts: tuple[tuple[int, int], ...] = ()
        if tok == "--":
            k = text.find("\n", j, stop)
            k = stop if k < 0 else k
        elif tok == "/-":
            k = comment_end(text, j)
            if k < 0 or k > stop:
                raise _error(text, j, "unterminated comment")
            if text.startswith(("/--", "/-!"), j):
                docs.append((j, k, text[j:k]))
        elif tok == "«":
            k = text.find("»", j + 1, stop)
            if k < 0:
                raise _error(text, j, "unterminated «name»")
            i = k + 1  # a quoted name part: code
            continue
        elif tok == "'":
            cm = CHAR.match(text, j, stop)
            if cm is None or _after_name(text, j, last):
                i = j + 1
                continue
            k = cm.end()
        else:
            start, k, code_parts = _string_at(text, j, last, docs)
        out.append(text[last:start])
        if code_parts:  # an interpolated string: its `{…}` parts are code
            at = start
            for a, b in code_parts:
                out.append(_BLANK.sub(" ", text[at:a]))
                _mask_into(text, a, b, out, docs)
                at = b
            out.append(_BLANK.sub(" ", text[at:k]))
        else:
            out.append(_BLANK.sub(" ", text[start:k]))
        last = i = k
    out.append(text[last:stop])


def _string_at(
    text: str, j: int, lo: int, docs: list[tuple[int, int, str]]
) -> tuple[int, int, tuple[tuple[int, int], ...]]:
    """(start, end, code parts) of the string literal whose first quote is at j, as the lexer
    reads it: `r#"…"#`, `s!"…"` (code parts unless it touches the token before), `m!"…"` and
    `f!"…"` at a token start (one string), `"…"` after a name ending in `!` (code parts)."""
    line = 0  # where, only on an error (counting lines for every string costs a pass each)
    try:
        p = j - 2
        if p >= lo and text[p] in "smf" and text[j - 1] == "!" and _token_start(text, p, lo):
            if text[p] == "s" and not _adjacent(text, p, docs):
                return _interpolated(text, p, j, line)
            end = string_end(text, p, line)
            assert end is not None
            return p, end, ()
        if j - 2 >= lo and text[j - 1] == "!" and _after_name(text, j - 1, lo):
            return _interpolated(text, j, j, line)
        p = j
        while p > lo and text[p - 1] == "#":
            p -= 1
        if p > lo and text[p - 1] == "r" and _token_start(text, p - 1, lo):
            end = string_end(text, p - 1, line)
            if end is not None:
                return p - 1, end, ()
        end = string_end(text, j, line)
        assert end is not None
        return j, end, ()
    except LexError as exc:
        raise _error(text, j, exc.reason) from None


def _interpolated(
    text: str, start: int, q: int, line: int
) -> tuple[int, int, tuple[tuple[int, int], ...]]:
    spans = interpolation_spans(text, start, q, line)
    parts = tuple((a, b) for kind, a, b in spans if kind is not Tok.STRING)
    return start, spans[-1][2], parts


def _error(text: str, at: int, reason: str) -> LexError:
    return LexError(reason, _line(text, at), at - (text.rfind("\n", 0, at) + 1))


def identifiers(text: str) -> list[str]:
    """The identifiers of Lean text (the lexer's IDENT tokens), in order, each once; text that
    does not lex (an unterminated string) is read as far as it goes."""
    try:
        code = mask(text).code
    except LexError:
        code = text
    seen: dict[str, None] = {}
    for m in _NAME_OR_NOT.finditer(code):
        if name := m.group("name"):
            seen.setdefault(name)
    return list(seen)


@dataclass(frozen=True)
class Scope:
    """What a statement's names resolve against.

    `names`: the declarations known (None: unknown, so every dotted or capitalised identifier
    counts as a constant); `namespace`: the namespaces enclosing the statement, outermost first
    (a declaration `A.B.foo` is read inside `A.B`); `short`: last name part → full names, for a
    name that is written shorter than any namespace explains (used when it names one
    declaration only); `owner`: the declaration itself, never its own constant."""

    names: Collection[str] | None = None
    namespace: Sequence[str] = ()
    short: Mapping[str, Sequence[str]] | None = None
    owner: str | None = None

    @classmethod
    def of(
        cls,
        declaration: str,
        names: Collection[str] | None = None,
        *,
        short: Mapping[str, Sequence[str]] | None = None,
    ) -> Scope:
        """The scope of the statement of `declaration` (its namespace is its name's prefix)."""
        return cls(
            names=names,
            namespace=tuple(declaration.split(".")[:-1]),
            owner=declaration,
            short=short,
        )


def constants_of(statement: str | None, scope: Scope | None = None) -> list[str]:
    """The constants a statement uses, in order of first use, each once.

    Without known names: the dotted or capitalised identifiers. With them, each identifier is
    resolved as Lean does: inside the innermost enclosing namespace first, then the outer ones,
    then as written (`_root_.` and «» removed); then, with `short`, as the one declaration with
    that last part. The declaration itself is not in scope in its own statement (`foo` in
    `theorem A.foo` is the root `foo`)."""
    if not statement:
        return []
    scope = scope or Scope()
    idents = identifiers(statement)
    if scope.names is None:
        found = [i for i in idents if "." in i or i[0].isupper()]
        return [i for i in found if i != scope.owner]
    names, ns = scope.names, list(scope.namespace)
    out: dict[str, None] = {}
    for ident in idents:
        written = ident.replace("«", "").replace("»", "")
        rooted = written.startswith("_root_.")
        written = written.removeprefix("_root_.")
        cands = [] if rooted else [".".join([*ns[:k], written]) for k in range(len(ns), 0, -1)]
        hit = next((c for c in [*cands, written] if c in names and c != scope.owner), None)
        if hit is None and scope.short is not None:
            short = scope.short.get(written.rsplit(".", 1)[-1], ())
            if len(short) == 1 and (short[0] == written or short[0].endswith("." + written)):
                hit = short[0]
        if hit is not None and hit != scope.owner:
            out.setdefault(hit)
    return list(out)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CAMEL_ONLY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def split_identifier(ident: str, *, lower: bool = True, acronyms: bool = True) -> list[str]:
    """An identifier's words: `Nat.Prime.two_le` → `[nat, prime, two, le]`, `IsOpen` →
    `[is, open]`, `HTTPServer` → `[http, server]` (split at dots, `_` and `'`, and at case
    changes). `lower=False` keeps the case; `acronyms=False` leaves a capital run joined to the
    word after it (`HTTPServer`), as index text version 1 did."""
    camel = _CAMEL if acronyms else _CAMEL_ONLY
    words = []
    for part in re.split(r"[._']+", ident):
        words += [w.lower() if lower else w for w in camel.split(part) if w]
    return words


# Characters that can make source read differently from what Lean sees.
_INVISIBLE = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD}
_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


# Every character the loop below reports (a fast test for the usual text that has none).
_SUSPICIOUS = re.compile(
    "["
    + "".join(re.escape(chr(o)) for o in sorted(_BIDI | _INVISIBLE))
    + "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)


def suspicious_characters(text: str) -> list[tuple[int, int, str]]:
    """(line, column, description) of control, bidi and invisible characters in the text."""
    out: list[tuple[int, int, str]] = []
    if _SUSPICIOUS.search(text) is None:
        return out
    for lineno, line in enumerate(text.split("\n"), 1):
        for col, ch in enumerate(line):
            o = ord(ch)
            if o in _BIDI:
                out.append((lineno, col, f"bidirectional control character U+{o:04X}"))
            elif o in _INVISIBLE:
                out.append((lineno, col, f"invisible character U+{o:04X}"))
            elif unicodedata.category(ch) == "Cc" and ch not in "\t\r":
                out.append((lineno, col, f"control character U+{o:04X}"))
    return out


__all__ = [
    "IDENT",
    "NAME_PART",
    "Masked",
    "Scope",
    "constants_of",
    "identifiers",
    "mask",
    "split_identifier",
    "suspicious_characters",
]
