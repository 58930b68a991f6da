"""A Metamath database parser (set.mm): statements, comments, sections, contributors.

It reads the whole grammar of the file format (comments, `$c $v $f $e $a $p $d ${ $}`, the
special `$t`/`$j` comments, section headers at four levels) and validates compressed and normal
proofs as tokens without checking them. It is built to read set.mm's 41 MB in about a second:
it jumps from keyword to keyword with `str.find` instead of splitting the file into tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from math2.errors import InputError
from math2.util.yamlfile import decode_utf8

# Section header decorations: part, chapter, section, subsection.
_HEADER_MARKS = {"####": 1, "#*#*": 2, "=-=-": 3, "-.-.": 4}
_CONTRIB = re.compile(
    r"\(\s*(Contributed|Revised|Proof[ \n]+shortened|Proof[ \n]+modification|Modified|Shortened"
    r"|Recoded)\s+by\s+([^,()]+?),\s*([^)]+?)\.?\s*\)"
)
_DISCOURAGED = re.compile(r"\(\s*(New\s+usage|Proof\s+modification)\s+is\s+discouraged\.\s*\)")
_LABEL_OK = re.compile(r"[A-Za-z0-9._-]+")
# A compressed proof: ( labels ) then upper-case letters, Z and ? ; a normal proof: labels and ?
_COMPRESSED = re.compile(r"\s*\(([\sA-Za-z0-9._-]*)\)([\sA-Z?]*)")
_NORMAL = re.compile(r"[\sA-Za-z0-9._?-]*")
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Contribution:
    """A tag such as "(Contributed by NM, 5-Apr-1994.)"."""

    role: str
    who: str
    date: str


@dataclass(slots=True)
class Statement:
    """An `$a` or `$p` statement with what surrounds it."""

    label: str
    keyword: str  # "a" or "p"
    typecode: str
    math: str
    line: int
    comment: str | None
    section: tuple[str, ...]
    contributions: list[Contribution] = field(default_factory=list)
    discouraged: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)  # labels of active $e

    @property
    def kind(self) -> str:
        """axiom, definition, theorem or syntax."""
        if self.typecode != "|-":
            return "syntax"
        if self.keyword == "p":
            return "theorem"
        return "definition" if self.label.startswith("df-") else "axiom"


@dataclass
class Database:
    """What a parse found."""

    path: str
    statements: list[Statement]
    constants: int = 0
    variables: int = 0
    floating: int = 0
    essential: int = 0
    disjoint: int = 0
    comments: int = 0
    typesetting: list[str] = field(default_factory=list)  # bodies of $t comments
    jcomments: list[str] = field(default_factory=list)  # bodies of $j comments
    contributors: dict[str, str] = field(default_factory=dict)  # initials -> name
    title: str | None = None

    @property
    def axioms(self) -> int:
        """Number of $a statements."""
        return sum(1 for s in self.statements if s.keyword == "a")

    @property
    def theorems(self) -> int:
        """Number of $p statements."""
        return sum(1 for s in self.statements if s.keyword == "p")


class MetamathError(InputError):
    """A malformed database: file, line, reason."""


def _header(comment: str) -> tuple[int, str] | None:
    """(level, title) if the comment is a section header."""
    s = comment.strip()
    mark = s[:4]
    level = _HEADER_MARKS.get(mark)
    if level is None:
        return None
    lines = [ln.strip() for ln in s.split("\n")]
    if len(lines) < 3 or not lines[0].startswith(mark) or not lines[2].startswith(mark):
        return None
    return level, lines[1]


_CONTRIB_LIST = re.compile(
    r"(?:^|\s{2,})([A-Z][A-Za-z]{1,3})\s{1,3}([A-Z][^\n]*?)(?=\s{2,}|$)", re.M
)


def parse(path: str | Path, text: str | None = None) -> Database:
    """Parse a Metamath database; any malformation is a MetamathError with the line."""
    path = Path(path)
    if text is None:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise MetamathError(path, None, f"cannot read: {exc.strerror or exc}") from exc
        text = decode_utf8(raw, path)
    db = Database(path=str(path), statements=[])
    find = text.find
    n = len(text)
    pos = 0
    line = 1  # line number at `pos`
    last_comment: str | None = None
    section: list[str] = []
    scopes: list[list[str]] = [[]]  # active $e labels per scope
    scope_lines: list[int] = []  # where each open ${ is
    # $c/$v discipline: every math symbol must be declared before use; $v is scoped.
    constants: set[str] = set()
    variables: set[str] = set()
    scope_vars: list[list[str]] = [[]]
    stmts = db.statements

    def err(at: int, reason: str) -> MetamathError:
        return MetamathError(path, text.count("\n", 0, at) + 1, reason)

    def upto(start: int, kw: str, stop: str = "$.") -> tuple[str, int]:
        """The text up to `stop` (comments inside a statement removed) and where `stop` is."""
        end = find(stop, start)
        if end < 0:
            raise err(start, f"${kw} statement without its closing {stop}")
        inner = find("$", start, end)
        if inner < 0:
            return text[start:end], end
        parts = []
        at = start
        while inner >= 0:
            if text.startswith("$(", inner):
                close = find("$)", inner + 2)
                if close < 0:
                    raise err(inner, "unterminated comment: $( without $)")
                parts.append(text[at:inner])
                at = close + 2
                end = find(stop, at)
                if end < 0:
                    raise err(start, f"${kw} statement without its closing {stop}")
                inner = find("$", at, end)
            else:
                raise err(inner, f"unexpected {text[inner : inner + 2]} inside a ${kw} statement")
        parts.append(text[at:end])
        return " ".join(parts), end

    while True:
        i = find("$", pos)
        if i < 0:
            tail = text[pos:]
            if tail.strip():
                raise err(pos + len(tail) - len(tail.lstrip()), f"stray text {tail.split()[0]!r}")
            break
        gap = text[pos:i]
        line += gap.count("\n")
        kw = text[i + 1] if i + 1 < n else ""
        if kw == "(":
            if gap.strip():
                raise MetamathError(path, line, f"stray text {gap.split()[0]!r} before a comment")
            j = find("$)", i + 2)
            if j < 0:
                raise MetamathError(path, line, "unterminated comment: $( without $)")
            body = text[i + 2 : j]
            nested = find("$(", i + 2, j)
            if nested >= 0:
                raise err(nested, "$( inside a comment")
            db.comments += 1
            stripped = body.lstrip()
            if stripped.startswith("$t"):
                db.typesetting.append(stripped[2:])
            elif stripped.startswith("$j"):
                db.jcomments.append(stripped[2:])
            else:
                head = _header(body)
                if head is not None:
                    level, title = head
                    del section[level - 1 :]
                    section.extend([""] * (level - 1 - len(section)))
                    section.append(title)
                    if level <= 2 and not db.contributors:
                        db.contributors = dict(_CONTRIB_LIST.findall(body))
                    last_comment = None
                else:
                    last_comment = body
                    if db.title is None and db.comments == 1:
                        db.title = body.strip().split("\n")[0]
            line += body.count("\n")
            pos = j + 2
            continue
        label = None
        if kw in "apef":
            parts = gap.split()
            if len(parts) != 1:
                reason = "a label" if not parts else f"one label, got {' '.join(parts[:3])!r}"
                raise MetamathError(path, line, f"${kw} statement needs {reason}")
            label = parts[0]
            if not _LABEL_OK.fullmatch(label):
                raise MetamathError(path, line, f"bad label {label!r}")
        elif gap.strip():
            raise MetamathError(path, line, f"stray text {gap.split()[0]!r}")
        if kw == "p":
            math, eq = upto(i + 2, kw, "$=")
            proof, end = upto(eq + 2, kw)
            if not (_COMPRESSED.fullmatch(proof) or _NORMAL.fullmatch(proof)):
                raise err(eq, f"$p {label}: the proof is neither compressed nor normal")
        elif kw in "aefcvd":
            math, end = upto(i + 2, kw)
        elif kw == "{":
            scopes.append([])
            scope_vars.append([])
            scope_lines.append(line)
            pos = i + 2
            continue
        elif kw == "}":
            if len(scopes) == 1:
                raise MetamathError(path, line, "$} without ${")
            scopes.pop()
            variables.difference_update(scope_vars.pop())
            scope_lines.pop()
            pos = i + 2
            continue
        elif kw == "[":
            raise MetamathError(path, line, "file inclusion $[ … $] is not supported")
        else:
            raise MetamathError(path, line, f"unknown keyword ${kw}")
        if kw in "apefd":
            for sym in math.split():
                if sym not in constants and sym not in variables:
                    raise MetamathError(
                        path,
                        line,
                        f"${kw} {label or ''}: symbol {sym!r} is not declared by a $c or an "
                        "active $v before it; the file is not a well-formed Metamath database "
                        "(use an intact set.mm: Debian's metamath-databases, or MATH2_DATA__SETMM)",
                    )
        if kw in "ap":
            tokens = math.split()
            if not tokens:
                raise MetamathError(path, line, f"${kw} {label} has no typecode")
            contribs = [
                Contribution(_WS.sub(" ", role), _WS.sub(" ", who), date)
                for role, who, date in _CONTRIB.findall(last_comment or "")
            ]
            stmts.append(
                Statement(
                    label=label,  # type: ignore[arg-type]
                    keyword=kw,
                    typecode=tokens[0],
                    math=" ".join(tokens[1:]),
                    line=line,
                    comment=last_comment,
                    section=tuple(section),
                    contributions=contribs,
                    discouraged=[_WS.sub(" ", d) for d in _DISCOURAGED.findall(last_comment or "")],
                    hypotheses=[h for scope in scopes for h in scope],
                )
            )
        elif kw == "e":
            db.essential += 1
            scopes[-1].append(label)  # type: ignore[arg-type]
        elif kw == "f":
            db.floating += 1
        elif kw == "c":
            syms = math.split()
            if len(scopes) > 1:
                raise MetamathError(path, line, "$c inside a ${ … $} block")
            for sym in syms:
                if sym in constants or sym in variables:
                    raise MetamathError(path, line, f"$c {sym!r} is declared twice")
                constants.add(sym)
            db.constants += len(syms)
        elif kw == "v":
            syms = math.split()
            for sym in syms:
                if sym in constants or sym in variables:
                    raise MetamathError(path, line, f"$v {sym!r} is declared twice")
                variables.add(sym)
            scope_vars[-1].extend(syms)
            db.variables += len(syms)
        elif kw == "d":
            db.disjoint += 1
        if kw != "e":  # a comment before a theorem's hypotheses still describes the theorem
            last_comment = None
        line += text.count("\n", i, end)
        pos = end + 2
    if scope_lines:
        raise MetamathError(path, scope_lines[-1], "${ is never closed with $}")
    return db


def is_full_sentence(comment: str | None) -> bool:
    """Whether a comment reads as at least one full sentence (the W1 rule of K6.6).

    After dropping the tags in parentheses, it must begin with a capital letter (or a `~ label`
    reference), hold at least four words, and end with a full stop.
    """
    if not comment:
        return False
    text = _CONTRIB.sub("", comment)
    text = _DISCOURAGED.sub("", text)
    text = _WS.sub(" ", text).strip()
    if len(text.split()) < 4 or not text.endswith((".", ".)")):
        return False
    first = text[0]
    return first.isupper() or first in "~`"
